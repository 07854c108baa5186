"""The write pipeline's rows: sessions and their turns and summaries, jobs, and the
consolidation log.

Turns and summaries are encrypted under the subject's data key like memories
(`EncryptedContent`); jobs and the consolidation log are content-free (ids, counts, reasons).

A foreign key to another of the namespace's tables says `db_constraint=False`: the
database's key is (column, namespace_id), which carries the distribution column and which a
ForeignKey cannot declare; the migrations make it (memoryhub/distribution.py).
"""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.memories.models import EncryptedContent


class Session(models.Model):
    """A conversation of a subject, named by the app (`external_id`); its turns are Messages.

    `summary_encrypted` is the rolling summary of the turns (under the subject's key), kept
    with its version for the `summary` and `summary_buffer` context strategies.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    subject = models.ForeignKey(
        "memories.Subject", db_constraint=False, on_delete=models.CASCADE, related_name="sessions"
    )
    external_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # Moved from the memories app with its rows; the table keeps its name, to which the
        # ciphertext of turns and summaries is bound (associated data).
        db_table = "memories_session"
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "external_id", "namespace"], name="one_session_per_external_id"
            )
        ]

    def __str__(self) -> str:
        return f"session {self.id}"


class MessageRole(models.TextChoices):
    USER = "user", _("User")
    ASSISTANT = "assistant", _("Assistant")
    SYSTEM = "system", _("System")
    TOOL = "tool", _("Tool")


class Message(EncryptedContent):
    """One turn of a session, encrypted under the subject's key; `position` orders them."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The session's namespace, copied: the column a distributed table is spread by.
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    session = models.ForeignKey(
        Session, db_constraint=False, on_delete=models.CASCADE, related_name="messages"
    )
    position = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    name = models.CharField(max_length=64, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # Moved from the memories app with its rows; the table keeps its name, to which the
        # ciphertext of turns and summaries is bound (associated data).
        db_table = "memories_message"
        ordering = ["session", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "position", "namespace"], name="one_message_per_position"
            )
        ]

    def __str__(self) -> str:
        return f"message {self.session_id}#{self.position}"


class JobStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


class Job(models.Model):
    """A unit of background work an app or admin can follow (ingestion, lifecycle sweeps).

    `idempotency_key` (with the API key that sent it) makes a retried request return the
    same job instead of doing the work twice; `request_hash` tells a true retry from a
    different request reusing the key. `result` and `error` are content-free (ids, counts,
    reasons).
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
        related_name="jobs",
    )
    kind = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    idempotency_key = models.CharField(max_length=255, blank=True)
    actor_id = models.CharField(max_length=64, blank=True)
    request_hash = models.CharField(max_length=64, blank=True)
    payload = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # Moved from the memories app with its rows; the table keeps its name, to which the
        # ciphertext of turns and summaries is bound (associated data).
        db_table = "memories_job"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "actor_id", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="one_job_per_idempotency_key",
            )
        ]
        indexes = [
            # The jobs not finished, few beside the finished: the queue depth `/metrics`
            # counts at every scrape, and the stale jobs' requeue.
            models.Index(
                fields=["status"],
                condition=Q(status__in=["queued", "running"]),
                name="job_unfinished",
            )
        ]

    def __str__(self) -> str:
        return f"job {self.id} {self.kind} {self.status}"


class Decision(models.TextChoices):
    ADD = "add", _("Added")
    NOOP = "noop", _("Duplicate, not stored")
    MERGE = "merge", _("Merged into an existing memory")
    SUPERSEDE = "supersede", _("Superseded an older memory")
    REJECT = "reject", _("Rejected")
    DISPUTE = "dispute", _("Put in doubt, sent to review")


class ConsolidationLog(models.Model):
    """What the write pipeline decided for one extracted memory, and why (no content)."""

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
    job = models.ForeignKey(
        Job, db_constraint=False, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decision = models.CharField(max_length=16, choices=Decision.choices)
    reason = models.CharField(max_length=200)
    memory_id = models.UUIDField(null=True, blank=True)  # the memory written or kept
    related_id = models.UUIDField(null=True, blank=True)  # the duplicate or superseded one
    similarity = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # Moved from the memories app with its rows; the table keeps its name, to which the
        # ciphertext of turns and summaries is bound (associated data).
        db_table = "memories_consolidationlog"
        ordering = ["-created_at"]
        indexes = [
            models.Index(
                fields=["namespace", "subject", "-created_at"], name="consolidation_by_subject"
            )
        ]

    def __str__(self) -> str:
        return f"{self.decision} {self.memory_id}"


class SessionSummary(EncryptedContent):
    """A version of a session's rolling summary, encrypted under the subject's key.

    Each ingest job that extracts writes the next version, covering the turns up to
    `through_position`; the newest version is the session's summary.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The session's namespace, copied: the column a distributed table is spread by.
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    session = models.ForeignKey(
        Session, db_constraint=False, on_delete=models.CASCADE, related_name="summaries"
    )
    version = models.PositiveIntegerField()
    through_position = models.PositiveIntegerField()
    summarizer = models.CharField(max_length=32)
    created_at = models.DateTimeField(default=timezone.now)
    # The offline summarizer's digest of the turns through `through_position`, encrypted
    # like the content (bound to field "digest"), on the newest version only: the next job
    # extends it with the new turns instead of reading the whole session again. None on
    # older versions, for other summarizers, and once a turn of the session is deleted.
    digest_encrypted = models.BinaryField(null=True, blank=True)

    class Meta:
        # Moved from the memories app with its rows; the table keeps its name, to which the
        # ciphertext of turns and summaries is bound (associated data).
        db_table = "memories_sessionsummary"
        ordering = ["session", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "version", "namespace"], name="one_summary_per_version"
            )
        ]

    def __str__(self) -> str:
        return f"summary {self.session_id} v{self.version}"
