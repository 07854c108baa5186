"""Row-level security on recall feedback (memoryhub/row_security.py)."""

from django.db import migrations

from memoryhub.row_security import wall_sql


class Migration(migrations.Migration):
    dependencies = [("recall", "0004_recall_feedback")]
    operations = [migrations.RunSQL(*wall_sql("recall_recallfeedback"))]
