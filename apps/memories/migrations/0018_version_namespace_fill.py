# Each version takes its memory's namespace, a batch a transaction: a large table is not
# locked whole, and a run cut short resumes where it stopped.

from django.db import migrations

BATCH = 10_000
FILL = """
    UPDATE memories_memoryversion v SET namespace_id = m.namespace_id
    FROM memories_memory m
    WHERE m.id = v.memory_id
      AND v.id IN (SELECT id FROM memories_memoryversion WHERE namespace_id IS NULL LIMIT %s)
"""


def fill(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        while True:
            cursor.execute(FILL, [BATCH])
            if cursor.rowcount == 0:
                return


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ('memories', '0017_version_namespace'),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
