# What replaced a memory, as a column: a nullable key to the memory that replaced it, keyed
# with the namespace like every key between a namespace's tables (memoryhub/distribution.py),
# and a partial index for the links to a memory (a successor's deletion nulls them).

import django.db.models.deletion
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # the index is built concurrently

    dependencies = [
        ("memories", "0022_subject_key"),
    ]

    operations = [
        d.Retried(
            migrations.AddField(
                model_name="memory",
                name="superseded_by",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    db_index=False,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="+",
                    to="memories.memory",
                ),
            ),
        ),
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(superseded_by__isnull=False),
                fields=["superseded_by"],
                name="memory_superseded_by",
            ),
        ),
        d.foreign_key("memories_memory", "superseded_by_id", "memories_memory"),
        d.validate("memories_memory", "superseded_by_id"),
    ]
