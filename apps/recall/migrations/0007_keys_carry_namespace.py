# Unique keys carry the namespace, as a distributed table's must; last, so that each still
# serves the lookups by its first columns.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0020_keys_carry_namespace'),
        ('namespaces', '0006_recall_config'),
        ('recall', '0006_recall_query'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='recallfeedback',
            name='one_feedback_per_memory_and_actor',
        ),
        migrations.AddConstraint(
            model_name='recallfeedback',
            constraint=models.UniqueConstraint(fields=('recall', 'memory_id', 'actor_type', 'actor_id', 'namespace'), name='one_feedback_per_memory_and_actor'),
        ),
    ]
