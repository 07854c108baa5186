# Unique keys carry the namespace, as a distributed table's must; last, so that each still
# serves the lookups by its first columns.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0019_version_namespace_required'),
        ('namespaces', '0006_recall_config'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='memoryversion',
            name='one_row_per_memory_version',
        ),
        migrations.AlterField(
            model_name='datakey',
            name='subject',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.subject'),
        ),
        migrations.AddConstraint(
            model_name='datakey',
            constraint=models.UniqueConstraint(fields=('subject', 'namespace'), name='one_key_per_subject'),
        ),
        migrations.AddConstraint(
            model_name='memoryversion',
            constraint=models.UniqueConstraint(fields=('memory', 'version', 'namespace'), name='one_row_per_memory_version'),
        ),
    ]
