"""Subjects, their data keys, and memories with their versions.

Sensitive text (memory content, earlier versions) is stored only as AES-256-GCM ciphertext
under the owning subject's data key, or the namespace's shared key for memories without a
subject. Data keys are stored only wrapped by the key-encryption keyring. Keyword search
uses `token_index`, keyed hashes of stemmed tokens: no plaintext word is stored. `tags` and
`metadata` are plaintext by design (for filtering) and documented as not for secrets.

A foreign key to another of the namespace's tables says `db_constraint=False`: the
database's key is (column, namespace_id), which carries the distribution column and which a
ForeignKey cannot declare; the migrations make it (memoryhub/distribution.py).
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex

from apps.memories.fields import EmbeddingField, TermArrayField

EMBEDDING_DIMENSIONS = 384
MULTILINGUAL_DIMENSIONS = 512
# A memory's vectors, and with its token arrays its search columns: what a read that only
# shows or opens memories leaves in the database (`.defer(*SEARCH_FIELDS)`).
VECTOR_FIELDS = ("embedding", "context_embedding", "multilingual_embedding")
SEARCH_FIELDS = (*VECTOR_FIELDS, "token_index", "context_index")


class EncryptedContent(models.Model):
    """A row whose text is stored only as AES-256-GCM ciphertext, under the data key of its
    subject (or of its namespace) at `key_version`; sealed and opened by `row_encryption`."""

    content_encrypted = models.BinaryField()
    key_version = models.PositiveIntegerField()

    class Meta:
        abstract = True


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
    # A subject has one key: the unique key below, which carries the namespace (as a
    # distributed table's keys must) and indexes the subject.
    subject = models.ForeignKey(
        Subject,
        db_constraint=False,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
    )
    version = models.PositiveIntegerField(default=1)
    wrapped = models.BinaryField()
    kek_version = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    rewrapped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subject", "namespace"], name="one_key_per_subject"),
            models.UniqueConstraint(
                fields=["namespace"],
                condition=Q(subject__isnull=True),
                name="one_shared_key_per_namespace",
            ),
        ]

    def __str__(self) -> str:
        return f"DataKey {self.pk} (kek v{self.kek_version})"


class Kind(models.TextChoices):
    SEMANTIC = "semantic", _("Semantic (facts, preferences)")
    EPISODIC = "episodic", _("Episodic (what happened)")
    PROCEDURAL = "procedural", _("Procedural (instructions)")


class Status(models.TextChoices):
    ACTIVE = "active", _("Active")
    ARCHIVED = "archived", _("Archived")
    PENDING_REVIEW = "pending_review", _("Pending review")
    # A later turn put the fact in doubt and no rule could say what holds instead ("the
    # allergist says I've outgrown it"): out of the current facts until a person confirms,
    # corrects or ends it (apps/memories/services/review.py).
    DISPUTED = "disputed", _("Disputed")


class Memory(EncryptedContent):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="memories"
    )
    subject = models.ForeignKey(
        Subject,
        db_constraint=False,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="memories",
    )
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.SEMANTIC)
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
    # The memory that replaced this one when it ended (a fact's new value, the fact a turn's
    # statement became, the memory a duplicate was merged into); null while it holds, and
    # for one that ended with no successor (a negation, a reviewer's end, a dispute).
    # What is served is decided by these columns: valid_to IS NULL is current.
    superseded_by = models.ForeignKey(
        "self",
        db_constraint=False,
        db_index=False,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
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
    # The multilingual model's vector (apps/memories/multilingual.py), and whether every
    # letter of the content is Latin: such a memory meets a Latin-script query through the
    # primary model, any other pair through this one.
    multilingual_embedding = EmbeddingField(
        dimensions=MULTILINGUAL_DIMENSIONS, null=True, blank=True
    )
    multilingual_model = models.CharField(max_length=200, blank=True, default="", db_default="")
    latin_script = models.BooleanField(default=True, db_default=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["namespace", "subject", "-created_at"], name="memory_by_subject"),
            models.Index(fields=["subject", "session_key", "position"], name="memory_by_session"),
            # The dashboard's explorer: a namespace's memories newest first, page by page
            # (keyset on created_at, id), and its counts by status and confidence.
            models.Index(fields=["namespace", "-created_at", "-id"], name="memory_newest"),
            models.Index(fields=["namespace", "status", "confidence"], name="memory_by_status"),
            # What a memory replaced (a successor's deletion nulls the links to it).
            models.Index(
                fields=["superseded_by"],
                name="memory_superseded_by",
                condition=Q(superseded_by__isnull=False),
            ),
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
            HnswIndex(
                name="memory_multilingual_hnsw",
                fields=["multilingual_embedding"],
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


class MemoryVersion(EncryptedContent):
    """An earlier content of a memory, encrypted under the same data key, with who and why."""

    # The memory's namespace, copied: the column a distributed table is spread by.
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    memory = models.ForeignKey(
        Memory, db_constraint=False, on_delete=models.CASCADE, related_name="versions"
    )
    version = models.PositiveIntegerField()
    changed_by = models.CharField(max_length=200)
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["memory", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "version", "namespace"], name="one_row_per_memory_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} v{self.version}"


class VectorColumn(models.TextChoices):
    PRIMARY = "primary", _("Primary")
    MULTILINGUAL = "multilingual", _("Multilingual")


class VectorFill(models.Model):
    """Whether every memory has a vector of `model` in `column`, and how far the job that
    fills them has come. Recall compares a query with a column's vectors only once its fill
    is complete (apps/memories/vector_spaces.py); writes keep a complete column complete."""

    column = models.CharField(max_length=16, choices=VectorColumn.choices)
    model = models.CharField(max_length=200)
    complete = models.BooleanField(default=False)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["column", "model"], name="one_fill_per_column_model"),
        ]

    def __str__(self) -> str:
        return f"{self.column}: {self.model}"
