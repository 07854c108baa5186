"""A chain's events in id order: its walk, its newest event, its export. Built without
locking the appends."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("audit", "0007_chains_per_namespace")]

    operations = [
        AddIndexConcurrently(
            model_name="auditevent",
            index=models.Index(fields=["chain", "id"], name="audit_by_chain"),
        ),
    ]
