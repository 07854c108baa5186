"""Row-level security on the recall log (memoryhub/row_security.py)."""

from django.db import migrations

from memoryhub.row_security import wall_sql


class Migration(migrations.Migration):
    dependencies = [("recall", "0001_move_from_memories"), ("memories", "0013_row_security")]
    forward, backward = wall_sql("memories_recalllog")
    operations = [migrations.RunSQL(forward, reverse_sql=backward)]
