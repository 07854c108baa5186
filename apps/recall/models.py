"""The recall log: which memories were served to whom, by id only.

A foreign key to another of the namespace's tables says `db_constraint=False`: the
database's key is (column, namespace_id), which carries the distribution column and which a
ForeignKey cannot declare; the migrations make it (memoryhub/distribution.py).
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from apps.memories.models import EncryptedContent


class RecallLog(models.Model):
    """Which memories went to whom: one row per recall or context request.

    It answers "memory M was served to key K in request R" for admins and for the subject.
    The query is kept encrypted (under the subject's data key, or the namespace's) for
    MEMORYHUB_RECALL_QUERY_DAYS, so eval cases can be made from recalls people judged, then
    forgotten; no content, no scores. Erased with the subject.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    subject = models.ForeignKey(
        "memories.Subject",
        db_constraint=False,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="recall_logs",
    )
    purpose = models.CharField(max_length=16, default="recall")
    actor_type = models.CharField(max_length=16)
    actor_id = models.CharField(max_length=64, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    memory_ids = ArrayField(models.UUIDField(), default=list)
    # How long the request took on the server (recall, or the whole context assembly), and
    # the tokens a context assembly served: figures for the overview, no content.
    duration_ms = models.FloatField(null=True, blank=True)
    tokens = models.PositiveIntegerField(null=True, blank=True)
    # The query, encrypted (row_encryption.seal_row); null once forgotten, or never kept.
    content_encrypted = models.BinaryField(null=True, blank=True)
    key_version = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # Moved from the memories app with its rows; the table keeps its name.
        db_table = "memories_recalllog"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["namespace", "subject", "-created_at"], name="recall_by_subject"),
            # The overview's per-day figures of a namespace.
            models.Index(fields=["namespace", "created_at"], name="recall_by_day"),
        ]

    def __str__(self) -> str:
        return f"recall {self.id}"


class RecallFeedback(EncryptedContent):
    """A judgement of one memory a recall served: relevant to it or not, by an app (API) or
    an admin. Its optional note is encrypted (the content fields) under the subject's key
    (the namespace's for a recall without a subject); erased with the recall's subject.
    Eval sets are built from these (apps/evaluation)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    subject = models.ForeignKey(
        "memories.Subject",
        db_constraint=False,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    recall = models.ForeignKey(
        RecallLog, db_constraint=False, on_delete=models.CASCADE, related_name="feedback"
    )
    memory_id = models.UUIDField()
    relevant = models.BooleanField()
    actor_type = models.CharField(max_length=16)
    actor_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["recall", "memory_id", "actor_type", "actor_id", "namespace"],
                name="one_feedback_per_memory_and_actor",
            )
        ]
        indexes = [models.Index(fields=["namespace", "-created_at"], name="feedback_newest")]

    def __str__(self) -> str:
        return f"feedback on {self.memory_id} in {self.recall_id}"
