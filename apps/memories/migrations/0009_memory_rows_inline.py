from django.db import migrations


class Migration(migrations.Migration):
    """Keep a memory's vectors and token arrays in its row (TOAST only past ~8 kB).

    By default PostgreSQL moves values out of a row longer than 2 kB, and pgvector's vectors
    (1.5 kB each at 384 dimensions) always went: every similarity computed in a recall then
    cost two extra index lookups into the TOAST table. Existing rows move in when rewritten
    (`VACUUM FULL memories_memory`); new and updated ones are written inline.
    """

    dependencies = [
        ("memories", "0008_drop_context_hnsw"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory SET (toast_tuple_target = 8160)",
            reverse_sql="ALTER TABLE memories_memory RESET (toast_tuple_target)",
        ),
    ]
