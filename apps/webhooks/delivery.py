"""Sending one delivery: claim it, sign it, POST it through safe_http, record the attempt.

At least once: a delivery is claimed by a conditional UPDATE of `claimed_until` (two
workers never send it at once), and the attempt is recorded after the POST; a worker killed
in between leaves the claim to expire, and the delivery is sent again under the same
`webhook-id`. Nothing here holds a transaction open during the request.
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Min, Q, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_field, open_memory
from apps.webhooks import signing
from apps.webhooks.catalog import MEMORY_EVENTS
from apps.webhooks.models import DeliveryStatus, WebhookAttempt, WebhookDelivery, WebhookEvent
from apps.webhooks.selectors import endpoint_secrets
from memoryhub import safe_http

logger = logging.getLogger(__name__)
RESPONSE_KEPT = 1024  # bytes of a response body kept with its attempt


@dataclass(frozen=True)
class Outcome:
    """What one call did: `sent` (an attempt was made), `delivered`, and when the delivery
    is due next (None: settled, or claimed elsewhere)."""

    sent: bool
    delivered: bool = False
    next_attempt_at: datetime | None = None
    claimed_elsewhere_until: datetime | None = None


def _claim(delivery_id: str, now: datetime) -> bool:
    until = now + timedelta(seconds=settings.MEMORYHUB_WEBHOOK_CLAIM_SECONDS)
    claimed = (
        WebhookDelivery.objects.filter(pk=delivery_id, status=DeliveryStatus.PENDING)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .update(claimed_until=until, updated_at=now)
    )
    return claimed == 1


def _content(delivery: WebhookDelivery, data: dict[str, Any], keys: KeyCache) -> None:
    """An include_content endpoint's additions, at send time: a memory's current text
    (absent once it is gone), the erased subject's external id. Each text sent is audited
    (`webhook.content_sent`, in the claim's transaction: before it leaves)."""
    endpoint, event = delivery.endpoint, delivery.event
    if not (endpoint.include_content and endpoint.creator_reads_memories):
        return
    if event.type == "subject.erased" and delivery.subject_encrypted:
        data["subject"] = open_field(
            keys, delivery, delivery.namespace_id, None, "subject", delivery.subject_encrypted
        )
    if event.type in MEMORY_EVENTS and data.get("memory_id"):
        memory = Memory.objects.filter(
            namespace_id=delivery.namespace_id, pk=data["memory_id"]
        ).first()
        if memory is None:
            return
        data["content"] = open_memory(keys, memory)
    else:
        return
    audit_record(
        actor=Actor.system("webhooks"),
        action="webhook.content_sent",
        namespace=endpoint.namespace,
        subject_id=event.subject_id,
        object_type="memory",
        object_id=str(data["memory_id"]),
        details={"endpoint_id": str(endpoint.pk), "delivery_id": str(delivery.pk)},
    )


def _message(delivery: WebhookDelivery) -> tuple[bytes, dict[str, str]]:
    keys = KeyCache()
    data = dict(delivery.event.data)
    _content(delivery, data, keys)
    body = json.dumps(
        {
            "type": delivery.event.type,
            "timestamp": delivery.event.created_at.isoformat(),
            "data": data,
        },
        separators=(",", ":"),
        sort_keys=True,
    ).encode()
    headers = signing.signed_headers(
        message_id=f"msg_{delivery.pk.hex}",
        timestamp=timezone.now(),
        body=body,
        secrets_in_use=endpoint_secrets(endpoint=delivery.endpoint, keys=keys),
    )
    return body, headers


def retry_delay(attempts: int) -> float | None:
    """Seconds until the next try after `attempts` failed ones (None: no tries left): the
    schedule's step, stretched by up to a tenth at random."""
    schedule = settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE
    if attempts > len(schedule):
        return None
    step = float(schedule[attempts - 1])
    return step * (1 + random.random() / 10)  # noqa: S311 (jitter, not a secret)


def delivery_attempt(*, delivery_id: str) -> Outcome:
    """Claim and send one delivery if it is due; record the attempt. A delivery that is
    settled, not due, gone, or claimed by another worker is left alone (`sent` False)."""
    now = timezone.now()
    with transaction.atomic():
        if not _claim(delivery_id, now):
            held = (
                WebhookDelivery.objects.filter(pk=delivery_id, status=DeliveryStatus.PENDING)
                .values_list("claimed_until", "next_attempt_at")
                .first()
            )
            if held is None:
                return Outcome(sent=False)
            return Outcome(sent=False, next_attempt_at=held[1], claimed_elsewhere_until=held[0])
        delivery = WebhookDelivery.objects.select_related(
            "event", "endpoint", "endpoint__namespace"
        ).get(pk=delivery_id)
        body, headers = _message(delivery)
    started = timezone.now()
    answer, error = None, ""
    try:
        answer = safe_http.post(delivery.endpoint.url, body=body, headers=headers)
    except (safe_http.UnsafeDestination, safe_http.DeliveryFailed) as failure:
        error = failure.reason
    return _record(delivery, started, answer, error)


def _record(
    delivery: WebhookDelivery, started: datetime, answer: safe_http.Answer | None, error: str
) -> Outcome:
    delivered = answer is not None and 200 <= answer.status < 300
    if answer is not None and not delivered:
        error = f"status_{answer.status}"
    now = timezone.now()
    attempts = delivery.attempts + 1
    delay = None if delivered else retry_delay(attempts)
    status = DeliveryStatus.PENDING if delay is not None else DeliveryStatus.FAILED
    if delivered:
        status = DeliveryStatus.DELIVERED
    next_at = now + timedelta(seconds=delay) if delay is not None else None
    with transaction.atomic():
        WebhookAttempt.objects.create(
            namespace_id=delivery.namespace_id,
            delivery=delivery,
            started_at=started,
            latency_ms=answer.elapsed_ms if answer else (now - started).total_seconds() * 1000,
            status_code=answer.status if answer else None,
            response_body=bytes(answer.body[:RESPONSE_KEPT]) if answer else b"",
            error=error[:64],
        )
        settled = status != DeliveryStatus.PENDING
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=status,
            attempts=attempts,
            next_attempt_at=next_at,
            claimed_until=None,
            last_status_code=answer.status if answer else None,
            updated_at=now,
            **({"subject_encrypted": None} if settled else {}),
        )
        _endpoint_health(delivery, delivered=delivered, failed=status == DeliveryStatus.FAILED)
    return Outcome(sent=True, delivered=delivered, next_attempt_at=next_at)


def _endpoint_health(delivery: WebhookDelivery, *, delivered: bool, failed: bool) -> None:
    """A delivery out of retries marks its endpoint failing (`webhook.failing`); a later
    success clears it (`webhook.recovered`). Audited once each way."""
    endpoint = delivery.endpoint
    rows = type(endpoint).objects.filter(pk=endpoint.pk)
    if failed and rows.filter(failing_since__isnull=True).update(failing_since=timezone.now()):
        action = "webhook.failing"
    elif delivered and rows.filter(failing_since__isnull=False).update(failing_since=None):
        action = "webhook.recovered"
    else:
        return
    audit_record(
        actor=Actor.system("webhooks"),
        action=action,
        namespace=endpoint.namespace,
        object_type="webhook_endpoint",
        object_id=str(endpoint.pk),
        details={"delivery_id": str(delivery.pk)},
    )


def deliveries_due(*, limit: int = 500) -> list[str]:
    """Ids of pending deliveries due now whose claim (if any) has expired: new ones whose
    send was lost, retries that are due, and those a killed worker held."""
    now = timezone.now()
    rows = (
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING)
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
    return [str(pk) for pk in rows]


def next_due_at() -> datetime | None:
    """When the next pending delivery is due, or its claim expires (for the dispatcher)."""
    now = timezone.now()
    found = (
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING)
        .annotate(
            due=Greatest(
                Coalesce("next_attempt_at", Value(now)), Coalesce("claimed_until", Value(now))
            )
        )
        .aggregate(first=Min("due"))
    )
    return found["first"]


def deliver_due(*, limit: int = 500) -> int:
    """Attempt every delivery due now, in this process (the broker-less dispatcher, tests).
    Returns how many attempts were made."""
    return sum(delivery_attempt(delivery_id=d).sent for d in deliveries_due(limit=limit))


def deliveries_forget_settled(*, older_than_days: int) -> int:
    """Delete the deliveries settled (delivered or failed) more than `older_than_days` ago,
    with their attempts, and the events left with no delivery. Returns how many deliveries.
    Pending ones are never deleted."""
    cutoff = timezone.now() - timedelta(days=older_than_days)
    settled = WebhookDelivery.objects.filter(
        status__in=[DeliveryStatus.DELIVERED, DeliveryStatus.FAILED], updated_at__lt=cutoff
    )
    counts = settled.delete()[1]
    WebhookEvent.objects.filter(created_at__lt=cutoff, deliveries__isnull=True).delete()
    return int(counts.get(WebhookDelivery._meta.label, 0))
