# Unique keys carry the namespace, as a distributed table's must; last, so that each still
# serves the lookups by its first columns.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0020_keys_carry_namespace'),
        ('namespaces', '0006_recall_config'),
        ('pipeline', '0007_turn_and_summary_namespace_required'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='message',
            name='one_message_per_position',
        ),
        migrations.RemoveConstraint(
            model_name='session',
            name='one_session_per_external_id',
        ),
        migrations.RemoveConstraint(
            model_name='sessionsummary',
            name='one_summary_per_version',
        ),
        migrations.AddConstraint(
            model_name='message',
            constraint=models.UniqueConstraint(fields=('session', 'position', 'namespace'), name='one_message_per_position'),
        ),
        migrations.AddConstraint(
            model_name='session',
            constraint=models.UniqueConstraint(fields=('subject', 'external_id', 'namespace'), name='one_session_per_external_id'),
        ),
        migrations.AddConstraint(
            model_name='sessionsummary',
            constraint=models.UniqueConstraint(fields=('session', 'version', 'namespace'), name='one_summary_per_version'),
        ),
    ]
