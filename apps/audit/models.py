from __future__ import annotations

from django.db import models


class Outcome(models.TextChoices):
    SUCCESS = "success", "Success"
    DENIED = "denied", "Denied"
    FAILED = "failed", "Failed"


class ActorType(models.TextChoices):
    USER = "user", "Dashboard user"
    API_KEY = "api_key", "API key"
    SUBJECT = "subject", "Subject (privacy portal)"
    SYSTEM = "system", "System"
    ANONYMOUS = "anonymous", "Anonymous"


class AuditEvent(models.Model):
    """One accountable action. Content-free: ids, field names, counts and hashes only.

    Rows form a hash chain (`hash` = SHA-256 over `prev_hash` and the row's canonical
    fields); the database refuses UPDATE and DELETE on this table (trigger, migration 0002).
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
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["namespace_id", "-id"], name="audit_by_namespace"),
            models.Index(fields=["subject_id"], name="audit_by_subject"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.action} {self.outcome}"


class ChainHead(models.Model):
    """The newest link of the chain: one row, updated with every append.

    Appending locks this row (UPDATE … RETURNING), which serialises appends and hands out
    the next id and the previous hash in one statement. `audit_verify` also checks that the
    head matches the newest event, so cutting events off the end of the log is detected.
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    last_id = models.BigIntegerField(default=0)
    last_hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"head at event {self.last_id}"
