# Keys carry the namespace (memoryhub/distribution.py): primary keys (id, namespace_id), and
# foreign keys between the namespace's tables (column, namespace_id), which Django's no longer
# make.

import django.db.models.deletion
from django.db import migrations, models

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently

    dependencies = [
        ("evaluation", "0004_keys_carry_namespace"),
        ("memories", "0021_distributed_keys"),
    ]

    operations = [
        d.key_index("evaluation_evalset"),
        d.key_index("evaluation_evalcase"),
        d.key_index("evaluation_variant"),
        d.key_index("evaluation_evalrun"),
        d.key_index("evaluation_caseresult"),
        d.foreign_key("evaluation_evalcase", "eval_set_id", "evaluation_evalset"),
        d.foreign_key("evaluation_evalcase", "subject_id", "memories_subject"),
        d.foreign_key("evaluation_evalrun", "eval_set_id", "evaluation_evalset"),
        d.foreign_key("evaluation_evalrun", "variant_id", "evaluation_variant"),
        d.foreign_key("evaluation_caseresult", "run_id", "evaluation_evalrun"),
        d.foreign_key("evaluation_caseresult", "case_id", "evaluation_evalcase"),
        d.Retried(
            migrations.AlterField(
                model_name="caseresult",
                name="case",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="evaluation.evalcase",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="caseresult",
                name="run",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="results",
                    to="evaluation.evalrun",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="evalcase",
                name="eval_set",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="cases",
                    to="evaluation.evalset",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="evalcase",
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
                model_name="evalrun",
                name="eval_set",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="runs",
                    to="evaluation.evalset",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="evalrun",
                name="variant",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="runs",
                    to="evaluation.variant",
                ),
            ),
        ),
        d.primary_key("evaluation_evalset"),
        d.primary_key("evaluation_evalcase"),
        d.primary_key("evaluation_variant"),
        d.primary_key("evaluation_evalrun"),
        d.primary_key("evaluation_caseresult"),
        d.validate("evaluation_evalcase", "eval_set_id"),
        d.validate("evaluation_evalcase", "subject_id"),
        d.validate("evaluation_evalrun", "eval_set_id"),
        d.validate("evaluation_evalrun", "variant_id"),
        d.validate("evaluation_caseresult", "run_id"),
        d.validate("evaluation_caseresult", "case_id"),
    ]
