# The Mem0 ids imported into each namespace. Keys carry the namespace
# (memoryhub/distribution.py) and the table is walled by it (memoryhub/row_security.py).

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

from memoryhub import distribution as d
from memoryhub.row_security import wall_sql


class Migration(migrations.Migration):
    initial = True
    atomic = False  # the key's index is built concurrently

    dependencies = [
        ("namespaces", "0009_sso_memberships"),
    ]

    operations = [
        migrations.CreateModel(
            name="ImportedMemory",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("source_id", models.CharField(max_length=255)),
                ("memory_id", models.UUIDField(default=uuid.uuid4)),
                ("duplicate", models.BooleanField(default=False)),
                ("imported_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "namespace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="namespaces.namespace",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("source_id", "namespace"), name="one_import_per_mem0_id"
                    )
                ],
            },
        ),
        d.key_index("mem0_bridge_importedmemory"),
        d.primary_key("mem0_bridge_importedmemory"),
        migrations.RunSQL(*wall_sql("mem0_bridge_importedmemory")),
    ]
