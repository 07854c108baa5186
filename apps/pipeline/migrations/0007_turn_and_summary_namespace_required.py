# Turns and summaries written while 0006 ran take their namespace too; then every row has one.

import django.db.models.deletion
from django.db import migrations, models

# Immediate: a deferred key check still pending would keep the tables from being altered.
FILL_REST = """
    SET CONSTRAINTS ALL IMMEDIATE;
    UPDATE memories_message c SET namespace_id = s.namespace_id
    FROM memories_session s WHERE s.id = c.session_id AND c.namespace_id IS NULL;
    UPDATE memories_sessionsummary c SET namespace_id = s.namespace_id
    FROM memories_session s WHERE s.id = c.session_id AND c.namespace_id IS NULL;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('pipeline', '0006_turn_and_summary_namespace_fill'),
    ]

    operations = [
        migrations.RunSQL(FILL_REST, migrations.RunSQL.noop, elidable=True),
        migrations.AlterField(
            model_name='message',
            name='namespace',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace'),
        ),
        migrations.AlterField(
            model_name='sessionsummary',
            name='namespace',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace'),
        ),
    ]
