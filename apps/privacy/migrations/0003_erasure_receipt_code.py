"""Codes that fetch an erasure's receipt again, walled by namespace."""

import django.db.models.deletion
import django.utils.timezone
import uuid
from django.db import migrations, models

from memoryhub.row_security import wall_sql


class Migration(migrations.Migration):

    dependencies = [
        ('namespaces', '0006_recall_config'),
        ('privacy', '0002_row_security'),
    ]

    operations = [
        migrations.CreateModel(
            name='ErasureReceiptCode',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('code_hash', models.CharField(max_length=64, unique=True)),
                ('audit_event_id', models.BigIntegerField()),
                ('locale', models.CharField(default='en', max_length=16)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('namespace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace')),
            ],
        ),
        # Walled like the portal's other tables (0002): a namespace's requests see its own.
        migrations.RunSQL(*wall_sql("privacy_erasurereceiptcode")),
    ]
