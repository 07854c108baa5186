from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KeyTransform
from django.utils.translation import gettext_lazy as _


class Outcome(models.TextChoices):
    SUCCESS = "success", _("Success")
    DENIED = "denied", _("Denied")
    FAILED = "failed", _("Failed")


class ActorType(models.TextChoices):
    USER = "user", _("Dashboard user")
    API_KEY = "api_key", _("API key")
    SUBJECT = "subject", _("Subject (privacy portal)")
    SYSTEM = "system", _("System")
    ANONYMOUS = "anonymous", _("Anonymous")


class AuditEvent(models.Model):
    """One accountable action. Content-free: ids, field names, counts and hashes only.

    Rows form hash chains, one per namespace and a global one (`hash` = SHA-256 over
    `prev_hash` and the row's canonical fields; apps/audit/chain.py); the database refuses
    UPDATE and DELETE on this table (trigger, migration 0002).
    Namespaces and subjects are referenced by copied ids, not foreign keys, so the log
    outlives them; an erased subject's id points at nothing.
    """

    created_at = models.DateTimeField()
    actor_type = models.CharField(max_length=16, choices=ActorType.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_name = models.CharField(max_length=200, blank=True)
    action = models.CharField(max_length=64)
    namespace_id = models.BigIntegerField(null=True, blank=True)
    namespace_slug = models.CharField(max_length=64, blank=True)
    subject_id = models.UUIDField(null=True, blank=True)
    object_type = models.CharField(max_length=64, blank=True)
    object_id = models.CharField(max_length=64, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.SUCCESS)
    details = models.JSONField(default=dict, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)  # unique in its chain: the key below
    # The chain it links into: its namespace's id, GLOBAL_CHAIN (0) without a namespace, or
    # SEALED_CHAIN (-1) for the single chain of an install from before chains per namespace.
    chain = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["hash", "chain"], name="one_event_per_hash_in_chain")
        ]
        # The audit viewer lists newest first (by id) under one equality filter at a time:
        # each filter's index ends in the id, so a page and its capped count read one index
        # range. Built concurrently (migration 0005): the table is large and always written.
        indexes = [
            models.Index(fields=["namespace_id", "-id"], name="audit_by_namespace"),
            models.Index(fields=["subject_id", "id"], name="audit_by_subject_newest"),
            models.Index(fields=["action", "id"], name="audit_by_action"),
            models.Index(fields=["actor_name", "id"], name="audit_by_actor"),
            models.Index(fields=["outcome", "id"], name="audit_by_outcome"),
            models.Index(fields=["created_at", "id"], name="audit_by_time"),
            # A chain's walk, its newest event (the head check), and a chain's export.
            models.Index(fields=["chain", "id"], name="audit_by_chain"),
            # A dashboard page that showed several people's memories names them in
            # `details.subjects`: each person's access history finds those reads by it.
            GinIndex(
                KeyTransform("subjects", "details"),
                name="audit_read_subjects",
                condition=Q(details__has_key="subjects"),
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.action} {self.outcome}"


class ChainHead(models.Model):
    """The newest link of one chain (`id` is the chain's key), updated with every append.

    Appending locks this row, which serialises appends to its chain only (until commit), and
    hands out the previous hash; the event's id is taken from the table's sequence under
    that lock, so ids rise along each chain. `audit_verify` also checks that each head
    matches its chain's newest event, so cutting events off a chain's end is detected.
    """

    id = models.BigIntegerField(primary_key=True)
    last_id = models.BigIntegerField(default=0)
    last_hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"chain {self.pk} head at event {self.last_id}"


class VerificationStatus(models.TextChoices):
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Intact")
    FAILED = "failed", _("Could not finish")
    BROKEN = "broken", _("Broken")


class ChainVerification(models.Model):
    """One walk of the hash chain (hourly on beat, or "verify now"), with its result.

    `through_event_id` is the newest event known intact after this walk: a walk that starts
    from an earlier walk's last event (incremental) carries that event forward, so it always
    reads "the chain is verified through event #N". A broken walk names the first broken
    link; `through_*` then stops just before it. `to_check` and `checked` are the progress.
    """

    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=16, choices=VerificationStatus.choices, default=VerificationStatus.RUNNING
    )
    requested_by = models.CharField(max_length=200)  # "beat" or "user:<name>"
    full = models.BooleanField(default=False)  # from the genesis (else from the last walk's end)
    chain = models.BigIntegerField(null=True, blank=True)  # one chain's walk; None: every chain
    from_event_id = models.BigIntegerField(null=True, blank=True)  # the anchor (incremental)
    to_check = models.BigIntegerField(default=0)
    checked = models.BigIntegerField(default=0)
    through_event_id = models.BigIntegerField(null=True, blank=True)
    through_at = models.DateTimeField(null=True, blank=True)
    through_hash = models.CharField(max_length=64, blank=True)
    broken_event_id = models.BigIntegerField(null=True, blank=True)
    broken_reason = models.CharField(max_length=200, blank=True)
    broken_chain = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["-finished_at", "-id"], name="verification_newest"),
        ]

    def __str__(self) -> str:
        return f"verification {self.pk} {self.status}"

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def percent(self) -> int:
        if self.finished:
            return 100
        return min(round(100 * self.checked / self.to_check), 99) if self.to_check else 0
