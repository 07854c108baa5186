"""Webhooks: the endpoints a namespace sends its events to, and the outbox that carries them.

An event (`WebhookEvent`) is written in the transaction of the change it reports (from the
audit log, apps/webhooks/events.py), with one `WebhookDelivery` per subscribed endpoint: the
outbox. A delivery is sent at least once; its id is the `webhook-id` header, the same on every
attempt and redelivery (the receiver's idempotency key). Each try is a `WebhookAttempt`.

Every table is the namespace's (namespace_id: row-level security and distribution keys, like
the portal's tables). A foreign key to another of the namespace's tables says
`db_constraint=False`: the database's key is (column, namespace_id), made by the migration
(memoryhub/distribution.py).
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone


class WebhookEndpoint(models.Model):
    """Where a namespace's events go. The signing secret is sealed under the namespace's data
    key (apps/memories/row_encryption.py), bound to this row; after a rotation the previous
    one keeps signing alongside until `previous_secret_until`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    url = models.CharField(max_length=2000)
    events = ArrayField(models.CharField(max_length=64), default=list)
    include_content = models.BooleanField(default=False)
    # Who made it: a dashboard user's name or an API key's prefix (copied: the endpoint
    # outlives both), and whether they could read memories then (include_content needs it).
    created_by = models.CharField(max_length=200)
    creator_reads_memories = models.BooleanField(default=False)
    key_version = models.PositiveIntegerField(default=1)
    secret_encrypted = models.BinaryField()
    previous_secret_encrypted = models.BinaryField(null=True, blank=True)
    previous_secret_until = models.DateTimeField(null=True, blank=True)
    # Set when a delivery used up its retries; cleared by the next success.
    failing_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"webhook {self.id} of namespace {self.namespace_id}"


class WebhookEvent(models.Model):
    """Something that happened, content-free (ids, kinds, times, counts)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    type = models.CharField(max_length=64)
    data = models.JSONField(default=dict)
    # The subject it is about (null: none, or shared memories); a restore drops the undelivered
    # events of subjects erased since (apps/backups).
    subject_id = models.UUIDField(null=True, blank=True)
    # The erased subject's receipt fingerprint (subject.erased only): what a restore matches.
    subject_fingerprint = models.CharField(max_length=64, blank=True)
    audit_event_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.type} {self.id}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "pending"
    DELIVERED = "delivered", "delivered"
    FAILED = "failed", "failed"


class WebhookDelivery(models.Model):
    """One event to one endpoint. Claimed by a conditional UPDATE of `claimed_until` before
    each attempt, so two workers never send it at once; a claim that expires (a killed
    worker) makes it due again."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    event = models.ForeignKey(
        WebhookEvent, db_constraint=False, on_delete=models.CASCADE, related_name="deliveries"
    )
    endpoint = models.ForeignKey(
        WebhookEndpoint,
        db_constraint=False,
        on_delete=models.CASCADE,
        related_name="deliveries",
    )
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    # subject.erased to an include_content endpoint: the subject's external id, sealed under
    # the namespace's key and bound to this row; forgotten once the delivery is settled.
    key_version = models.PositiveIntegerField(default=1)
    subject_encrypted = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="webhook_delivery_due",
                condition=models.Q(status="pending"),
            )
        ]

    def __str__(self) -> str:
        return f"delivery {self.id} ({self.status})"


class WebhookAttempt(models.Model):
    """One try of a delivery: when, how long, what came back (the first 1 KiB), or why none."""

    id = models.BigAutoField(primary_key=True)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    delivery = models.ForeignKey(
        WebhookDelivery, db_constraint=False, on_delete=models.CASCADE, related_name="tries"
    )
    started_at = models.DateTimeField(default=timezone.now)
    latency_ms = models.FloatField(default=0.0)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    response_body = models.BinaryField(default=bytes)
    error = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["started_at", "id"]

    def __str__(self) -> str:
        return f"attempt {self.id} of {self.delivery_id}"
