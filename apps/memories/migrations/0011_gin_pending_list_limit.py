from django.contrib.postgres.indexes import GinIndex
from django.db import migrations

INDEXES = {"memory_token_index": "token_index", "memory_context_index": "context_index"}


class Migration(migrations.Migration):
    """Cap the pending list of the keyword GIN indexes at 256 kB (PostgreSQL's default: 4 MB).

    New entries wait in an unsorted pending list that every search reads in full until a
    vacuum (or the list's limit) merges them into the index. After a burst of writes, 4 MB of
    it added milliseconds to each keyword search of a large subject; bulk ingest is no slower
    at 256 kB. Only the index's storage parameter changes: nothing is rebuilt.
    """

    dependencies = [
        ("memories", "0010_field_classes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    [f"ALTER INDEX {name} SET (gin_pending_list_limit = 256)" for name in INDEXES],
                    reverse_sql=[f"ALTER INDEX {name} RESET (gin_pending_list_limit)" for name in INDEXES],
                ),
            ],
            state_operations=[
                *(migrations.RemoveIndex(model_name="memory", name=name) for name in INDEXES),
                *(
                    migrations.AddIndex(
                        model_name="memory",
                        index=GinIndex(fields=[field], name=name, gin_pending_list_limit=256),
                    )
                    for name, field in INDEXES.items()
                ),
            ],
        ),
    ]
