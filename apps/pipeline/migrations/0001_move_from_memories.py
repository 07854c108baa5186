"""The pipeline's models, moved from the memories app with their rows: taken into this app's
state under their old tables, which keep their names: the
ciphertext of every turn and summary is bound to its table's name (associated data)."""

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
                    name='Job',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('kind', models.CharField(max_length=32)),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='queued', max_length=16)),
                        ('idempotency_key', models.CharField(blank=True, max_length=255)),
                        ('actor_id', models.CharField(blank=True, max_length=64)),
                        ('request_hash', models.CharField(blank=True, max_length=64)),
                        ('payload', models.JSONField(blank=True, default=dict)),
                        ('result', models.JSONField(blank=True, default=dict)),
                        ('error', models.TextField(blank=True)),
                        ('attempts', models.PositiveIntegerField(default=0)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('updated_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('namespace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace')),
                        ('subject', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='jobs', to='memories.subject')),
                    ],
                    options={
                        'db_table': 'memories_job',
                        'ordering': ['-created_at'],
                    },
                ),
                migrations.CreateModel(
                    name='ConsolidationLog',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('decision', models.CharField(choices=[('add', 'Added'), ('noop', 'Duplicate, not stored'), ('merge', 'Merged into an existing memory'), ('supersede', 'Superseded an older memory'), ('reject', 'Rejected')], max_length=16)),
                        ('reason', models.CharField(max_length=200)),
                        ('memory_id', models.UUIDField(blank=True, null=True)),
                        ('related_id', models.UUIDField(blank=True, null=True)),
                        ('similarity', models.FloatField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('namespace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace')),
                        ('subject', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.subject')),
                        ('job', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='pipeline.job')),
                    ],
                    options={
                        'db_table': 'memories_consolidationlog',
                        'ordering': ['-created_at'],
                    },
                ),
                migrations.CreateModel(
                    name='Session',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('external_id', models.CharField(max_length=200)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('updated_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('namespace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace')),
                        ('subject', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sessions', to='memories.subject')),
                    ],
                    options={
                        'db_table': 'memories_session',
                        'ordering': ['-updated_at'],
                    },
                ),
                migrations.CreateModel(
                    name='Message',
                    fields=[
                        ('content_encrypted', models.BinaryField()),
                        ('key_version', models.PositiveIntegerField()),
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('position', models.PositiveIntegerField()),
                        ('role', models.CharField(choices=[('user', 'User'), ('assistant', 'Assistant'), ('system', 'System'), ('tool', 'Tool')], max_length=16)),
                        ('name', models.CharField(blank=True, max_length=64)),
                        ('token_count', models.PositiveIntegerField(default=0)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='messages', to='pipeline.session')),
                    ],
                    options={
                        'db_table': 'memories_message',
                        'ordering': ['session', 'position'],
                    },
                ),
                migrations.CreateModel(
                    name='SessionSummary',
                    fields=[
                        ('content_encrypted', models.BinaryField()),
                        ('key_version', models.PositiveIntegerField()),
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('version', models.PositiveIntegerField()),
                        ('through_position', models.PositiveIntegerField()),
                        ('summarizer', models.CharField(max_length=32)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='summaries', to='pipeline.session')),
                    ],
                    options={
                        'db_table': 'memories_sessionsummary',
                        'ordering': ['session', '-version'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='job',
                    constraint=models.UniqueConstraint(condition=models.Q(('idempotency_key', ''), _negated=True), fields=('namespace', 'actor_id', 'idempotency_key'), name='one_job_per_idempotency_key'),
                ),
                migrations.AddIndex(
                    model_name='consolidationlog',
                    index=models.Index(fields=['namespace', 'subject', '-created_at'], name='consolidation_by_subject'),
                ),
                migrations.AddConstraint(
                    model_name='session',
                    constraint=models.UniqueConstraint(fields=('subject', 'external_id'), name='one_session_per_external_id'),
                ),
                migrations.AddConstraint(
                    model_name='message',
                    constraint=models.UniqueConstraint(fields=('session', 'position'), name='one_message_per_position'),
                ),
                migrations.AddConstraint(
                    model_name='sessionsummary',
                    constraint=models.UniqueConstraint(fields=('session', 'version'), name='one_summary_per_version'),
                ),
            ],
        ),
    ]
