"""Sessions, messages, summaries, jobs and the consolidation log move to the pipeline app,
the recall log to the recall app: the models leave this app's state, the tables stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0011_gin_pending_list_limit'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables stay as they are: only Django's idea of which app owns them moves.
            state_operations=[
                migrations.RemoveField(
                    model_name='job',
                    name='namespace',
                ),
                migrations.RemoveField(
                    model_name='job',
                    name='subject',
                ),
                migrations.RemoveField(
                    model_name='message',
                    name='session',
                ),
                migrations.RemoveField(
                    model_name='recalllog',
                    name='namespace',
                ),
                migrations.RemoveField(
                    model_name='recalllog',
                    name='subject',
                ),
                migrations.RemoveField(
                    model_name='session',
                    name='namespace',
                ),
                migrations.RemoveField(
                    model_name='session',
                    name='subject',
                ),
                migrations.RemoveField(
                    model_name='sessionsummary',
                    name='session',
                ),
                migrations.DeleteModel(
                    name='ConsolidationLog',
                ),
                migrations.DeleteModel(
                    name='Job',
                ),
                migrations.DeleteModel(
                    name='Message',
                ),
                migrations.DeleteModel(
                    name='RecallLog',
                ),
                migrations.DeleteModel(
                    name='Session',
                ),
                migrations.DeleteModel(
                    name='SessionSummary',
                ),
            ],
        ),
    ]
