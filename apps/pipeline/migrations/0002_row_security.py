"""Row-level security on the pipeline's tables (memoryhub/row_security.py)."""

from django.db import migrations

from memoryhub.row_security import wall_sql

WALLS = [
    wall_sql("memories_session"),
    wall_sql("memories_message", parent=("session_id", "memories_session")),
    wall_sql("memories_sessionsummary", parent=("session_id", "memories_session")),
    wall_sql("memories_job"),
    wall_sql("memories_consolidationlog"),
]


class Migration(migrations.Migration):
    dependencies = [("pipeline", "0001_move_from_memories"), ("memories", "0013_row_security")]
    operations = [migrations.RunSQL(forward, reverse_sql=backward) for forward, backward in WALLS]
