"""Row-level security on the evaluation tables (memoryhub/row_security.py)."""

from django.db import migrations

from memoryhub.row_security import wall_sql

TABLES = [
    "evaluation_evalset",
    "evaluation_evalcase",
    "evaluation_variant",
    "evaluation_evalrun",
    "evaluation_caseresult",
]


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0001_eval_sets_and_runs")]
    operations = [migrations.RunSQL(*wall_sql(table)) for table in TABLES]
