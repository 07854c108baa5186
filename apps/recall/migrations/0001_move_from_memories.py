"""The recall log, moved from the memories app with its rows: taken into this app's state
under its old table, which keeps its name (as the pipeline's tables do)."""

import django.contrib.postgres.fields
import django.db.models.deletion
import django.utils.timezone
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('memories', '0012_pipeline_and_recall_move_out'),
        ('namespaces', '0003_pipeline'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables stay as they are: only Django's idea of which app owns them moves.
            state_operations=[
                migrations.CreateModel(
                    name='RecallLog',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('purpose', models.CharField(default='recall', max_length=16)),
                        ('actor_type', models.CharField(max_length=16)),
                        ('actor_id', models.CharField(blank=True, max_length=64)),
                        ('request_id', models.CharField(blank=True, max_length=64)),
                        ('memory_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), default=list, size=None)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('namespace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace')),
                        ('subject', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='recall_logs', to='memories.subject')),
                    ],
                    options={
                        'db_table': 'memories_recalllog',
                        'ordering': ['-created_at'],
                        'indexes': [models.Index(fields=['namespace', 'subject', '-created_at'], name='recall_by_subject')],
                    },
                ),
            ],
        ),
    ]
