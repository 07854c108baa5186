"""Saved playground configurations: a link to share an assembly set-up with other admins."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class PlaygroundConfig(models.Model):
    """The playground's inputs (query and system prompt included), encrypted under the
    namespace's shared key; readable by whoever may use the namespace in the dashboard."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    content_encrypted = models.BinaryField()
    key_version = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"playground config {self.id}"
