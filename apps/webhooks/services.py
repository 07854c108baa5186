"""Webhook endpoints and the outbox: every write is keyword-only, transactional, and audited
in its transaction (content-free: ids, URLs' hosts are not secrets, counts)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories.row_encryption import KeyCache, seal_field
from apps.namespaces.models import Namespace
from apps.webhooks import signing
from apps.webhooks.catalog import EVENT_TYPES, TEST_EVENT
from apps.webhooks.models import (
    DeliveryStatus,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from apps.webhooks.selectors import endpoint_secrets
from memoryhub import safe_http
from memoryhub.exceptions import ApplicationError

if TYPE_CHECKING:
    from apps.audit.models import AuditEvent

MAX_URL_LENGTH = 2000


@dataclass(frozen=True)
class NewEndpoint:
    url: str
    events: list[str]
    include_content: bool = False


@dataclass(frozen=True)
class CreatedEndpoint:
    endpoint: WebhookEndpoint
    secret: str  # shown once


def _check_url(url: str) -> None:
    if not url or len(url) > MAX_URL_LENGTH:
        raise ApplicationError(
            gettext_noop("Give the endpoint's https URL (at most 2000 characters)."),
            details={"url": ["invalid"]},
        )
    try:
        safe_http.check_destination(url)
    except safe_http.UnsafeDestination as refusal:
        raise ApplicationError(
            gettext_noop("This URL cannot receive webhooks: %(reason)s."),
            params={"reason": refusal.reason},
            code="unsafe_url",
            details={"url": [refusal.reason]},
        ) from None


def _check_events(events: list[str]) -> list[str]:
    unknown = sorted(set(events) - set(EVENT_TYPES))
    if not events or unknown:
        raise ApplicationError(
            gettext_noop("Name the events to send, among the known ones."),
            details={"events": unknown or ["required"], "allowed": list(EVENT_TYPES)},
        )
    return [t for t in EVENT_TYPES if t in events]  # documented order, no repeats


def _seal_secret(keys: KeyCache, endpoint: WebhookEndpoint, field: str, secret: str) -> bytes:
    return seal_field(keys, endpoint, endpoint.namespace_id, None, field, secret)


def _endpoint_audit(
    actor: Actor, action: str, endpoint: WebhookEndpoint, details: dict[str, Any]
) -> None:
    audit_record(
        actor=actor,
        action=action,
        namespace=endpoint.namespace,
        object_type="webhook_endpoint",
        object_id=str(endpoint.pk),
        details=details,
    )


def endpoint_create(
    *,
    actor: Actor,
    namespace: Namespace,
    item: NewEndpoint,
    created_by: str,
    creator_reads_memories: bool,
) -> CreatedEndpoint:
    """Add an endpoint: its URL checked by safe_http (https, no private address unless
    MEMORYHUB_WEBHOOK_ALLOWED_HOSTS lists it), its events known, `include_content` only for a
    creator who may read memories. A new secret is sealed under the namespace's key and
    returned once. The namespace's endpoint count goes up in the same transaction (the
    audit listener's cheap path reads it). Audited as `webhook.create`."""
    _check_url(item.url)
    events = _check_events(list(item.events))
    if item.include_content and not creator_reads_memories:
        raise ApplicationError(
            gettext_noop("Sending memories' text needs the permission to read memories."),
            code="permission_denied",
            status_code=403,
            details={"include_content": ["needs memories:read"]},
        )
    secret = signing.new_secret()
    keys = KeyCache()
    with transaction.atomic():
        endpoint = WebhookEndpoint(
            namespace=namespace,
            url=item.url,
            events=events,
            include_content=item.include_content,
            created_by=created_by[:200],
            creator_reads_memories=creator_reads_memories,
        )
        _, endpoint.key_version = keys.key_for(namespace.pk, None)
        endpoint.secret_encrypted = _seal_secret(keys, endpoint, "secret", secret)
        endpoint.save(force_insert=True)
        Namespace.objects.filter(pk=namespace.pk).update(
            webhook_endpoints=F("webhook_endpoints") + 1
        )
        namespace.webhook_endpoints += 1
        _endpoint_audit(
            actor,
            "webhook.create",
            endpoint,
            {"events": events, "include_content": item.include_content},
        )
    return CreatedEndpoint(endpoint, secret)


def endpoint_delete(*, actor: Actor, endpoint: WebhookEndpoint) -> None:
    """Remove an endpoint with its deliveries and their attempts (undelivered events go
    nowhere). Audited as `webhook.delete`."""
    with transaction.atomic():
        pending = endpoint.deliveries.filter(status=DeliveryStatus.PENDING).count()
        _endpoint_audit(actor, "webhook.delete", endpoint, {"pending_deliveries": pending})
        WebhookEndpoint.objects.filter(pk=endpoint.pk).delete()
        Namespace.objects.filter(pk=endpoint.namespace_id, webhook_endpoints__gt=0).update(
            webhook_endpoints=F("webhook_endpoints") - 1
        )


def endpoint_rotate_secret(*, actor: Actor, endpoint: WebhookEndpoint) -> str:
    """A new secret (returned once); the current one becomes the previous one and keeps
    signing alongside for MEMORYHUB_WEBHOOK_SECRET_OVERLAP seconds. Audited as
    `webhook.rotate_secret`."""
    keys = KeyCache()
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
        current = endpoint_secrets(endpoint=endpoint, keys=keys)[0]
        secret = signing.new_secret()
        _, endpoint.key_version = keys.key_for(endpoint.namespace_id, None)
        endpoint.secret_encrypted = _seal_secret(keys, endpoint, "secret", secret)
        endpoint.previous_secret_encrypted = _seal_secret(
            keys, endpoint, "previous_secret", current
        )
        overlap = settings.MEMORYHUB_WEBHOOK_SECRET_OVERLAP
        endpoint.previous_secret_until = timezone.now() + timedelta(seconds=overlap)
        endpoint.save(
            update_fields=[
                "key_version",
                "secret_encrypted",
                "previous_secret_encrypted",
                "previous_secret_until",
            ]
        )
        _endpoint_audit(actor, "webhook.rotate_secret", endpoint, {"overlap_seconds": overlap})
    return secret


def _deliveries_create(
    event: WebhookEvent, endpoints: list[WebhookEndpoint], external_id: str | None
) -> list[WebhookDelivery]:
    keys = KeyCache()
    deliveries = []
    for endpoint in endpoints:
        delivery = WebhookDelivery(
            id=uuid.uuid4(),
            namespace_id=event.namespace_id,
            event=event,
            endpoint=endpoint,
            next_attempt_at=event.created_at,
        )
        if external_id and endpoint.include_content:
            # Only for the endpoints that may have it, sealed, and forgotten once settled.
            _, delivery.key_version = keys.key_for(event.namespace_id, None)
            delivery.subject_encrypted = seal_field(
                keys, delivery, event.namespace_id, None, "subject", external_id
            )
        deliveries.append(delivery)
    return WebhookDelivery.objects.bulk_create(deliveries)


def _namespaces_of(audit_event: AuditEvent) -> list[int]:
    if audit_event.namespace_id is not None:
        return [audit_event.namespace_id]
    chain = (audit_event.details or {}).get("chain")
    if chain:  # a namespace's chain broke: its own endpoints hear of it
        return [int(chain)]
    # The global chain is every namespace's concern.
    return list(Namespace.objects.filter(webhook_endpoints__gt=0).values_list("pk", flat=True))


# The event and a delivery to each endpoint of the namespace subscribed to its type, in one
# statement: nothing is written when no endpoint subscribes.
_OUTBOX_INSERT = """
WITH endpoint AS (
    SELECT id FROM webhooks_webhookendpoint
    WHERE namespace_id = %(namespace)s AND events @> ARRAY[%(type)s]::varchar(64)[]
), event AS (
    INSERT INTO webhooks_webhookevent
        (id, namespace_id, type, data, subject_id, subject_fingerprint, audit_event_id, created_at)
    SELECT %(event)s, %(namespace)s, %(type)s, %(data)s, %(subject)s, %(fingerprint)s,
        %(audit)s, %(at)s
    WHERE EXISTS (SELECT 1 FROM endpoint)
    RETURNING id
)
INSERT INTO webhooks_webhookdelivery
    (id, namespace_id, event_id, endpoint_id, status, attempts, next_attempt_at, key_version,
     created_at, updated_at)
SELECT gen_random_uuid(), %(namespace)s, event.id, endpoint.id, 'pending', 0, %(at)s, 1,
    %(now)s, %(now)s
FROM event CROSS JOIN endpoint
RETURNING id
"""


def _outbox_insert(
    *,
    audit_event: AuditEvent,
    namespace_id: int,
    event_type: str,
    data: dict[str, Any],
) -> list[uuid.UUID]:
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            _OUTBOX_INSERT,
            {
                "namespace": namespace_id,
                "type": event_type,
                "event": uuid.uuid4(),
                "data": json.dumps(data, cls=DjangoJSONEncoder),
                "subject": audit_event.subject_id,
                "fingerprint": str(data.get("subject_fingerprint", ""))[:64],
                "audit": audit_event.pk,
                "at": audit_event.created_at,
                "now": now,
            },
        )
        return [row[0] for row in cursor.fetchall()]


def _sealed_outbox_insert(
    *,
    audit_event: AuditEvent,
    namespace_id: int,
    event_type: str,
    data: dict[str, Any],
    endpoints: list[WebhookEndpoint],
    external_id: str,
) -> list[uuid.UUID]:
    """The outbox rows when some deliveries carry the erased subject's sealed external id
    (each sealed under the namespace's key, bound to its own row)."""
    event = WebhookEvent.objects.create(
        namespace_id=namespace_id,
        type=event_type,
        data=data,
        subject_id=audit_event.subject_id,
        subject_fingerprint=str(data.get("subject_fingerprint", ""))[:64],
        audit_event_id=audit_event.pk,
        created_at=audit_event.created_at,
    )
    return [d.pk for d in _deliveries_create(event, endpoints, external_id)]


def event_record(
    *,
    audit_event: AuditEvent,
    event_type: str,
    data: dict[str, Any] | Callable[[], dict[str, Any]],
    external_id: str | None = None,
) -> list[uuid.UUID]:
    """The outbox rows of one event, in the caller's transaction (the audited change's): the
    event and a delivery to each endpoint of its namespace subscribed to its type, sent
    after the commit; the deliveries' ids are returned. Nothing is written when no endpoint
    subscribes.

    `data` given as a dict (cheap to build) costs one statement in all. Given as a function
    (it reads the database), the subscribed endpoints are read first and it is called only
    if there are any. `external_id` (subject.erased) is sealed into the deliveries to
    include_content endpoints only."""
    from apps.webhooks.dispatch import deliveries_send_after_commit

    created: list[uuid.UUID] = []
    for namespace_id in _namespaces_of(audit_event):
        endpoints: list[WebhookEndpoint] | None = None
        if callable(data) or external_id or audit_event.namespace_id is None:
            endpoints = list(
                WebhookEndpoint.objects.filter(
                    namespace_id=namespace_id, events__contains=[event_type]
                )
            )
            if not endpoints:
                continue
        if callable(data):
            data = data()  # built once, and only for an event someone hears
        built = data
        if audit_event.namespace_id is None:  # a global event, told to each namespace
            slug = Namespace.objects.filter(pk=namespace_id).values_list("slug", flat=True)
            built = {**built, "namespace": slug.first() or ""}
        if external_id and endpoints and any(e.include_content for e in endpoints):
            created += _sealed_outbox_insert(
                audit_event=audit_event,
                namespace_id=namespace_id,
                event_type=event_type,
                data=built,
                endpoints=endpoints,
                external_id=external_id,
            )
        else:
            created += _outbox_insert(
                audit_event=audit_event,
                namespace_id=namespace_id,
                event_type=event_type,
                data=built,
            )
    if created:
        deliveries_send_after_commit(created)
    return created


def endpoint_send_test(*, actor: Actor, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """A `webhook.test` event to this endpoint only, sent after the commit. Audited as
    `webhook.test`."""
    from apps.webhooks.dispatch import deliveries_send_after_commit

    with transaction.atomic():
        now = timezone.now()
        event = WebhookEvent.objects.create(
            namespace_id=endpoint.namespace_id,
            type=TEST_EVENT,
            data={"namespace": endpoint.namespace.slug, "endpoint_id": str(endpoint.pk)},
            created_at=now,
        )
        (delivery,) = _deliveries_create(event, [endpoint], None)
        _endpoint_audit(actor, "webhook.test", endpoint, {"delivery_id": str(delivery.pk)})
        deliveries_send_after_commit([delivery.pk])
    return delivery


def delivery_redeliver(*, actor: Actor, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery again, with its retries, under the same `webhook-id` (the receiver's
    idempotency key). Audited as `webhook.redeliver`."""
    from apps.webhooks.dispatch import deliveries_send_after_commit

    with transaction.atomic():
        now = timezone.now()
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.PENDING,
            attempts=0,
            next_attempt_at=now,
            claimed_until=None,
            updated_at=now,
        )
        _endpoint_audit(
            actor, "webhook.redeliver", delivery.endpoint, {"delivery_id": str(delivery.pk)}
        )
        deliveries_send_after_commit([delivery.pk])
    delivery.refresh_from_db()
    return delivery


def deliveries_redeliver_failed(*, actor: Actor, endpoint: WebhookEndpoint, since: datetime) -> int:
    """Send again every failed delivery of the endpoint created since `since`, each with its
    retries and its own `webhook-id` (the dashboard's "redeliver every failed delivery since").
    Audited once, as `webhook.redeliver` with the count. Returns how many."""
    from apps.webhooks.dispatch import deliveries_send_after_commit

    with transaction.atomic():
        now = timezone.now()
        failed = WebhookDelivery.objects.filter(
            namespace_id=endpoint.namespace_id,
            endpoint=endpoint,
            status=DeliveryStatus.FAILED,
            created_at__gte=since,
        )
        ids = list(failed.values_list("pk", flat=True))
        WebhookDelivery.objects.filter(pk__in=ids).update(
            status=DeliveryStatus.PENDING,
            attempts=0,
            next_attempt_at=now,
            claimed_until=None,
            updated_at=now,
        )
        _endpoint_audit(
            actor,
            "webhook.redeliver",
            endpoint,
            {"failed_since": since.isoformat(), "count": len(ids)},
        )
        deliveries_send_after_commit(ids)
    return len(ids)


def deliveries_drop_erased(*, namespace_id: int, subject_ids: list[uuid.UUID]) -> int:
    """After a restore's replayed erasures: the undelivered deliveries of the restored
    outbox's events about these (now erased again) subjects are dropped, their own
    `subject.erased` events aside (the replay emitted those anew). Returns how many."""
    if not subject_ids:
        return 0
    events = WebhookEvent.objects.filter(namespace_id=namespace_id, subject_id__in=subject_ids)
    dropped = (
        WebhookDelivery.objects.filter(
            namespace_id=namespace_id,
            event__in=events.exclude(type="subject.erased"),
            status=DeliveryStatus.PENDING,
        )
        .delete()[1]
        .get(WebhookDelivery._meta.label, 0)
    )
    return int(dropped)
