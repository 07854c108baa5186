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
        ("recall", "0007_keys_carry_namespace"),
    ]

    operations = [
        d.key_index("memories_recalllog"),
        d.key_index("recall_recallfeedback"),
        d.foreign_key("memories_recalllog", "subject_id", "memories_subject"),
        d.foreign_key("recall_recallfeedback", "recall_id", "memories_recalllog"),
        d.foreign_key("recall_recallfeedback", "subject_id", "memories_subject"),
        d.Retried(
            migrations.AlterField(
                model_name="recallfeedback",
                name="recall",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="feedback",
                    to="recall.recalllog",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="recallfeedback",
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
                model_name="recalllog",
                name="subject",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="recall_logs",
                    to="memories.subject",
                ),
            ),
        ),
        d.primary_key("memories_recalllog"),
        d.primary_key("recall_recallfeedback"),
        d.validate("memories_recalllog", "subject_id"),
        d.validate("recall_recallfeedback", "recall_id"),
        d.validate("recall_recallfeedback", "subject_id"),
    ]
