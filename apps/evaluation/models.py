"""Recall quality review: eval sets (questions encrypted like memories, with the memories that
answer them), named variants of the recall configuration, and runs of a set against the
namespace's configuration or a variant, with their figures and per-case results.

A foreign key to another of the namespace's tables says `db_constraint=False`: the
database's key is (column, namespace_id), which carries the distribution column and which a
ForeignKey cannot declare; the migrations make it (memoryhub/distribution.py).
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from apps.memories.models import EncryptedContent


class SetOrigin(models.TextChoices):
    JSONL = "jsonl", _("Imported (JSON lines)")
    LOCOMO = "locomo", _("Imported (LoCoMo)")
    FEEDBACK = "feedback", _("Made from feedback")
    MANUAL = "manual", _("Made by hand")


class EvalSet(models.Model):
    """A namespace's set of recall questions. Its name and description are labels an admin
    writes (shown in the audit log's object, never the questions)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    name = models.CharField(max_length=120)
    description = models.CharField(max_length=500, blank=True)
    origin = models.CharField(max_length=16, choices=SetOrigin.choices)
    created_by = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "name"], name="eval_set_name_unique")
        ]

    def __str__(self) -> str:
        return self.name


class EvalCase(EncryptedContent):
    """One question (the content fields: encrypted under its subject's data key, or the
    namespace's for a question without a subject), asked for `subject`, answered by any of
    `expected` (memory ids). No expected memory: an unanswerable case, which measures
    abstention. Erased with its subject."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    eval_set = models.ForeignKey(
        EvalSet, db_constraint=False, on_delete=models.CASCADE, related_name="cases"
    )
    subject = models.ForeignKey(
        "memories.Subject",
        db_constraint=False,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    position = models.PositiveIntegerField()
    expected = ArrayField(models.UUIDField(), default=list, blank=True)
    category = models.CharField(max_length=40, blank=True)
    # The question's language case, where its set names one (recall_eval's table by language).
    language = models.CharField(max_length=16, blank=True)
    # Where a case came from: the recall (log row) it was made from, if any.
    recall_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["eval_set", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["eval_set", "position", "namespace"], name="eval_case_position"
            )
        ]

    def __str__(self) -> str:
        return f"case {self.position} of {self.eval_set_id}"


class Variant(models.Model):
    """A named recall configuration to try against the namespace's own (the stored form of
    apps/recall/config.py: only what differs from the defaults)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    name = models.CharField(max_length=80)
    config = models.JSONField(default=dict, blank=True)
    created_by = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    promoted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "name"], name="variant_name_unique")
        ]

    def __str__(self) -> str:
        return self.name


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", pgettext_lazy("run status", "Finished")  # not the time label
    FAILED = "failed", _("Failed")


class EvalRun(models.Model):
    """A set evaluated against a configuration (the namespace's at the time, or a variant's;
    `config` keeps every knob as it was). Worked through as a job: each case's result is
    committed on its own, so a run whose worker died goes on where it stopped."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    eval_set = models.ForeignKey(
        EvalSet, db_constraint=False, on_delete=models.CASCADE, related_name="runs"
    )
    variant = models.ForeignKey(
        Variant,
        db_constraint=False,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="runs",
    )
    label = models.CharField(max_length=120)  # "namespace configuration" or the variant's name
    config = models.JSONField(default=dict)
    k = models.PositiveSmallIntegerField(default=10)
    token_budget = models.PositiveIntegerField(default=2000)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    metrics = models.JSONField(default=dict, blank=True)
    error = models.CharField(max_length=500, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_by = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["eval_set", "-created_at"], name="eval_run_newest")]

    def __str__(self) -> str:
        return f"run {self.id} of {self.eval_set_id}"

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


class CaseResult(models.Model):
    """What a run's recall returned for one case: the ranked memory ids with their score
    components (no content), the rank of each expected memory, time and tokens."""

    id = models.BigAutoField(primary_key=True)
    run = models.ForeignKey(
        EvalRun, db_constraint=False, on_delete=models.CASCADE, related_name="results"
    )
    case = models.ForeignKey(
        EvalCase, db_constraint=False, on_delete=models.CASCADE, related_name="+"
    )
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    ranked = ArrayField(models.UUIDField(), default=list)
    components = models.JSONField(default=list)  # per ranked memory: its score components
    ranks = models.JSONField(default=dict)  # expected memory id -> rank (1-based) or None
    scores = models.JSONField(default=dict)  # this case's metrics
    latency_ms = models.FloatField()
    tokens = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "case", "namespace"], name="one_result_per_case")
        ]

    def __str__(self) -> str:
        return f"result of {self.case_id} in {self.run_id}"
