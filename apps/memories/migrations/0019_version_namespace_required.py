# Versions written while 0018 ran take their namespace too; then every version has one.

import django.db.models.deletion
from django.db import migrations, models

# Immediate: a deferred key check still pending would keep the table from being altered.
FILL_REST = """
    SET CONSTRAINTS ALL IMMEDIATE;
    UPDATE memories_memoryversion v SET namespace_id = m.namespace_id
    FROM memories_memory m
    WHERE m.id = v.memory_id AND v.namespace_id IS NULL
"""


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0018_version_namespace_fill'),
    ]

    operations = [
        migrations.RunSQL(FILL_REST, migrations.RunSQL.noop, elidable=True),
        migrations.AlterField(
            model_name='memoryversion',
            name='namespace',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace'),
        ),
    ]
