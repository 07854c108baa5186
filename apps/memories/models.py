"""Subjects, their data keys, and memories with their versions.

Sensitive text (memory content, earlier versions) is stored only as AES-256-GCM ciphertext
under the owning subject's data key, or the namespace's shared key for memories without a
subject. Data keys are stored only wrapped by the key-encryption keyring. Keyword search
uses `token_index`, keyed hashes of stemmed tokens: no plaintext word is stored. `tags` and
`metadata` are plaintext by design (for filtering) and documented as not for secrets.
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q
from django.utils import timezone
from pgvector.django import HnswIndex

from apps.memories.fields import EmbeddingField, TermArrayField

EMBEDDING_DIMENSIONS = 384


class Subject(models.Model):
    """An end user of an app, known by the app's own `external_id` (use opaque ids)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="subjects"
    )
    external_id = models.CharField(max_length=255)
    paused = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "external_id"], name="subject_unique_in_namespace"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace_id}/{self.id}"


class DataKey(models.Model):
    """A data key, wrapped by the keyring: one per subject, one per namespace (subject null).

    Deleting the row crypto-shreds everything encrypted under it.
    """

    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="data_keys"
    )
    subject = models.OneToOneField(
        Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="data_key"
    )
    version = models.PositiveIntegerField(default=1)
    wrapped = models.BinaryField()
    kek_version = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    rewrapped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace"],
                condition=Q(subject__isnull=True),
                name="one_shared_key_per_namespace",
            ),
        ]

    def __str__(self) -> str:
        return f"DataKey {self.pk} (kek v{self.kek_version})"


class Kind(models.TextChoices):
    SEMANTIC = "semantic", "Semantic (facts, preferences)"
    EPISODIC = "episodic", "Episodic (what happened)"
    PROCEDURAL = "procedural", "Procedural (instructions)"


class Status(models.TextChoices):
    ACTIVE = "active", "Active"
    ARCHIVED = "archived", "Archived"
    PENDING_REVIEW = "pending_review", "Pending review"


class Memory(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="memories"
    )
    subject = models.ForeignKey(
        Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="memories"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.SEMANTIC)
    content_encrypted = models.BinaryField()
    key_version = models.PositiveIntegerField()
    token_index = TermArrayField(default=list, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    importance = models.FloatField(default=0.5)
    confidence = models.FloatField(default=1.0)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    source = models.JSONField(default=dict, blank=True)
    occurred_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    version = models.PositiveIntegerField(default=1)
    embedding = EmbeddingField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="", db_default="")
    # Conversation turns know their place: the session they belong to and their position in
    # it. Recall uses the neighbouring turns (two either side) as context of each turn.
    session_key = models.CharField(max_length=200, blank=True, default="")
    position = models.IntegerField(null=True, blank=True)
    # Keyed-hash tokens of the neighbouring turns (+-1 twice, +-2 once: weights 2:1), sorted,
    # and the neighbour-weighted embedding; derived from stored columns, refreshed on writes.
    context_index = TermArrayField(default=list, blank=True)
    # Tokens of the memory's line in a prompt ("- " + content) per OpenAI encoding, counted at
    # write time so assembly need not count them again. Like token_count, a length: no text.
    prompt_tokens = models.JSONField(
        default=dict, blank=True, db_default=models.Value({}, output_field=models.JSONField())
    )
    context_embedding = EmbeddingField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["namespace", "subject", "-created_at"], name="memory_by_subject"),
            models.Index(fields=["subject", "session_key", "position"], name="memory_by_session"),
            # Every search reads the whole pending list of new entries: keep it short (256 kB
            # rather than 4 MB) so a burst of writes does not slow recall until a vacuum.
            GinIndex(fields=["token_index"], name="memory_token_index", gin_pending_list_limit=256),
            GinIndex(
                fields=["context_index"], name="memory_context_index", gin_pending_list_limit=256
            ),
            GinIndex(fields=["tags"], name="memory_tags"),
            HnswIndex(
                name="memory_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(importance__gte=0) & Q(importance__lte=1), name="memory_importance_0_1"
            ),
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="memory_confidence_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"Memory {self.id} v{self.version}"


class MemoryVersion(models.Model):
    """An earlier content of a memory, encrypted under the same data key, with who and why."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    content_encrypted = models.BinaryField()
    key_version = models.PositiveIntegerField()
    changed_by = models.CharField(max_length=200)
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["memory", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "version"], name="one_row_per_memory_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} v{self.version}"


class RecallLog(models.Model):
    """Which memories went to whom: one row per recall or context request, ids only.

    No query text, no content, no scores beyond ranks: it answers "memory M was served to
    key K in request R" for admins and for the subject. Erased with the subject.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    subject = models.ForeignKey(
        Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="recall_logs"
    )
    purpose = models.CharField(max_length=16, default="recall")
    actor_type = models.CharField(max_length=16)
    actor_id = models.CharField(max_length=64, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    memory_ids = ArrayField(models.UUIDField(), default=list)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["namespace", "subject", "-created_at"], name="recall_by_subject")
        ]

    def __str__(self) -> str:
        return f"recall {self.id}"


class Session(models.Model):
    """A conversation of a subject, named by the app (`external_id`); its turns are Messages.

    `summary_encrypted` is the rolling summary of the turns (under the subject's key), kept
    with its version for the `summary` and `summary_buffer` context strategies.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="sessions")
    external_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "external_id"], name="one_session_per_external_id"
            )
        ]

    def __str__(self) -> str:
        return f"session {self.id}"


class Role(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"
    SYSTEM = "system", "System"
    TOOL = "tool", "Tool"


class Message(models.Model):
    """One turn of a session, encrypted under the subject's key; `position` orders them."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    position = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    name = models.CharField(max_length=64, blank=True)
    content_encrypted = models.BinaryField()
    key_version = models.PositiveIntegerField()
    token_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "position"]
        constraints = [
            models.UniqueConstraint(fields=["session", "position"], name="one_message_per_position")
        ]

    def __str__(self) -> str:
        return f"message {self.session_id}#{self.position}"


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


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
        Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
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
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "actor_id", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="one_job_per_idempotency_key",
            )
        ]

    def __str__(self) -> str:
        return f"job {self.id} {self.kind} {self.status}"


class Decision(models.TextChoices):
    ADD = "add", "Added"
    NOOP = "noop", "Duplicate, not stored"
    MERGE = "merge", "Merged into an existing memory"
    SUPERSEDE = "supersede", "Superseded an older memory"
    REJECT = "reject", "Rejected"


class ConsolidationLog(models.Model):
    """What the write pipeline decided for one extracted memory, and why (no content)."""

    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    subject = models.ForeignKey(
        Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decision = models.CharField(max_length=16, choices=Decision.choices)
    reason = models.CharField(max_length=200)
    memory_id = models.UUIDField(null=True, blank=True)  # the memory written or kept
    related_id = models.UUIDField(null=True, blank=True)  # the duplicate or superseded one
    similarity = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(
                fields=["namespace", "subject", "-created_at"], name="consolidation_by_subject"
            )
        ]

    def __str__(self) -> str:
        return f"{self.decision} {self.memory_id}"


class SessionSummary(models.Model):
    """A version of a session's rolling summary, encrypted under the subject's key.

    Each ingest job that extracts writes the next version, covering the turns up to
    `through_position`; the newest version is the session's summary.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="summaries")
    version = models.PositiveIntegerField()
    content_encrypted = models.BinaryField()
    key_version = models.PositiveIntegerField()
    through_position = models.PositiveIntegerField()
    summarizer = models.CharField(max_length=32)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["session", "version"], name="one_summary_per_version")
        ]

    def __str__(self) -> str:
        return f"summary {self.session_id} v{self.version}"
