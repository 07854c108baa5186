"""The jobs not finished (queued, running): counted at every scrape of `/metrics`. Built
without locking the writes of jobs."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("pipeline", "0009_distributed_keys")]

    operations = [
        AddIndexConcurrently(
            model_name="job",
            index=models.Index(
                condition=models.Q(("status__in", ["queued", "running"])),
                fields=["status"],
                name="job_unfinished",
            ),
        ),
    ]
