# Keys carry the namespace (memoryhub/distribution.py): primary keys (id, namespace_id), and
# foreign keys between the namespace's tables (column, namespace_id), which Django's no longer
# make.

import django.db.models.deletion
from django.db import migrations, models

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently

    dependencies = [
        ("memories", "0021_distributed_keys"),
        ("pipeline", "0008_keys_carry_namespace"),
    ]

    operations = [
        d.key_index("memories_session"),
        d.key_index("memories_message"),
        d.key_index("memories_job"),
        d.key_index("memories_consolidationlog"),
        d.key_index("memories_sessionsummary"),
        d.foreign_key("memories_session", "subject_id", "memories_subject"),
        d.foreign_key("memories_message", "session_id", "memories_session"),
        d.foreign_key("memories_job", "subject_id", "memories_subject"),
        d.foreign_key("memories_consolidationlog", "job_id", "memories_job"),
        d.foreign_key("memories_consolidationlog", "subject_id", "memories_subject"),
        d.foreign_key("memories_sessionsummary", "session_id", "memories_session"),
        d.Retried(
            migrations.AlterField(
                model_name="consolidationlog",
                name="job",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="+",
                    to="pipeline.job",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="consolidationlog",
                name="subject",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="memories.subject",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="job",
                name="subject",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="jobs",
                    to="memories.subject",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="message",
                name="session",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="messages",
                    to="pipeline.session",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="session",
                name="subject",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="sessions",
                    to="memories.subject",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="sessionsummary",
                name="session",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="summaries",
                    to="pipeline.session",
                ),
            ),
        ),
        d.primary_key("memories_session"),
        d.primary_key("memories_message"),
        d.primary_key("memories_job"),
        d.primary_key("memories_consolidationlog"),
        d.primary_key("memories_sessionsummary"),
        d.validate("memories_session", "subject_id"),
        d.validate("memories_message", "session_id"),
        d.validate("memories_job", "subject_id"),
        d.validate("memories_consolidationlog", "job_id"),
        d.validate("memories_consolidationlog", "subject_id"),
        d.validate("memories_sessionsummary", "session_id"),
    ]
