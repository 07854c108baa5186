# Keys carry the namespace (memoryhub/distribution.py): primary keys (id, namespace_id), and
# foreign keys between the namespace's tables (column, namespace_id), which Django's no longer
# make.

import django.db.models.deletion
from django.db import migrations, models

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently

    dependencies = [
        ("memories", "0020_keys_carry_namespace"),
    ]

    operations = [
        d.key_index("memories_subject"),
        d.key_index("memories_datakey"),
        d.key_index("memories_memory"),
        d.key_index("memories_memoryversion"),
        d.foreign_key("memories_datakey", "subject_id", "memories_subject"),
        d.foreign_key("memories_memory", "subject_id", "memories_subject"),
        d.foreign_key("memories_memoryversion", "memory_id", "memories_memory"),
        d.Retried(
            migrations.AlterField(
                model_name="datakey",
                name="subject",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    db_index=False,
                    null=True,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="memories.subject",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="memory",
                name="subject",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="memories",
                    to="memories.subject",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="memoryversion",
                name="memory",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="versions",
                    to="memories.memory",
                ),
            ),
        ),
        d.primary_key("memories_datakey"),
        d.primary_key("memories_memory"),
        d.primary_key("memories_memoryversion"),
        d.validate("memories_datakey", "subject_id"),
        d.validate("memories_memory", "subject_id"),
        d.validate("memories_memoryversion", "memory_id"),
        # memories_subject's primary key follows in 0022, once no other app's foreign key
        # points at its id alone.
    ]
