"""The Mem0 memories imported into a namespace, by their Mem0 id: an import run again skips
them. A row holds ids only (Mem0's, and the memory it became), no content.

`memory_id` is a plain column, not a foreign key: when the memory is deleted or its subject
erased later, the row stays, so importing the same data again does not bring it back.
"""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone


class ImportedMemory(models.Model):
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    source_id = models.CharField(max_length=255)
    # The memory it became; a duplicate's is the memory it duplicates.
    memory_id = models.UUIDField(default=uuid.uuid4)
    duplicate = models.BooleanField(default=False)
    imported_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source_id", "namespace"], name="one_import_per_mem0_id"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace_id}/{self.source_id}"
