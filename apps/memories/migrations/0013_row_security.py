"""Row-level security on the store's tables (memoryhub/row_security.py): the tenant role,
its grants, and the namespace wall on subjects, data keys, memories and their versions."""

from django.db import migrations

from memoryhub.row_security import ROLE_SQL, wall_sql

WALLS = [
    wall_sql("memories_subject"),
    wall_sql("memories_datakey"),
    wall_sql("memories_memory"),
    wall_sql("memories_memoryversion", parent=("memory_id", "memories_memory")),
]


class Migration(migrations.Migration):
    dependencies = [("memories", "0012_pipeline_and_recall_move_out")]
    operations = [
        migrations.RunSQL(ROLE_SQL, reverse_sql=migrations.RunSQL.noop),
        *(migrations.RunSQL(forward, reverse_sql=backward) for forward, backward in WALLS),
    ]
