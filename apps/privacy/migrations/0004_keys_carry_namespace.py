# Unique keys carry the namespace, as a distributed table's must; last, so that each still
# serves the lookups by its first columns.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0020_keys_carry_namespace'),
        ('namespaces', '0006_recall_config'),
        ('privacy', '0003_erasure_receipt_code'),
    ]

    operations = [
        migrations.AlterField(
            model_name='portalsession',
            name='link',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='privacy.portallink'),
        ),
        migrations.AlterField(
            model_name='schedulederasure',
            name='subject',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.subject'),
        ),
        migrations.AddConstraint(
            model_name='portalsession',
            constraint=models.UniqueConstraint(fields=('link', 'namespace'), name='one_session_per_link'),
        ),
        migrations.AddConstraint(
            model_name='schedulederasure',
            constraint=models.UniqueConstraint(fields=('subject', 'namespace'), name='one_scheduled_erasure_per_subject'),
        ),
    ]
