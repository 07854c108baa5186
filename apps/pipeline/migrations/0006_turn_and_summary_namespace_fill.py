# Each turn and summary takes its session's namespace, a batch a transaction: a large table
# is not locked whole, and a run cut short resumes where it stopped.

from django.db import migrations

BATCH = 10_000
TABLES = ("memories_message", "memories_sessionsummary")
FILL = """
    UPDATE {table} c SET namespace_id = s.namespace_id
    FROM memories_session s
    WHERE s.id = c.session_id
      AND c.id IN (SELECT id FROM {table} WHERE namespace_id IS NULL LIMIT %s)
"""


def fill(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        for table in TABLES:
            while True:
                cursor.execute(FILL.format(table=table), [BATCH])
                if cursor.rowcount == 0:
                    break


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ('pipeline', '0005_turn_and_summary_namespace'),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
