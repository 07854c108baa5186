"""Writing audit events. Called by every other service inside its own transaction."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from apps.audit import chain
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, Outcome

# Serialises appends so that each event links to the one committed before it. Held until
# the surrounding transaction commits, which keeps the chain linear under concurrency.
_CHAIN_LOCK_KEY = 0x4D48_4155  # "MHAU"


def audit_record(
    *,
    actor: Actor,
    action: str,
    namespace: Any | None = None,
    subject_id: uuid.UUID | None = None,
    object_type: str = "",
    object_id: str = "",
    outcome: str = Outcome.SUCCESS,
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event to the chain, in the caller's transaction.

    Invariant: `details` is content-free (ids, field names, counts, hashes). Callers never
    pass memory text, keys or embeddings. Outside a transaction it opens its own.
    """
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_CHAIN_LOCK_KEY])
            cursor.execute("SELECT nextval(pg_get_serial_sequence('audit_auditevent', 'id'))")
            (event_id,) = cursor.fetchone()
        previous = AuditEvent.objects.order_by("-id").values_list("hash", flat=True).first()
        event = AuditEvent(
            id=event_id,
            created_at=timezone.now(),
            actor_type=actor.type,
            actor_id=actor.id,
            actor_name=actor.name[:200],
            action=action,
            namespace_id=getattr(namespace, "pk", None),
            namespace_slug=getattr(namespace, "slug", "") or "",
            subject_id=subject_id,
            object_type=object_type,
            object_id=object_id,
            request_id=actor.request_id,
            ip=actor.ip,
            outcome=outcome,
            details=details or {},
            prev_hash=previous or chain.GENESIS,
        )
        event.hash = chain.link_hash(event_as_chain_fields(event))
        event.save(force_insert=True)
    return event


def audit_denied(
    *, actor: Actor, action: str, namespace: Any | None = None, reason: str, **fields: Any
) -> AuditEvent:
    """Record a refused attempt. Call it outside any transaction that is about to roll back."""
    return audit_record(
        actor=actor,
        action=action,
        namespace=namespace,
        outcome=Outcome.DENIED,
        details={"reason": reason},
        **fields,
    )


def event_as_chain_fields(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "created_at": event.created_at.isoformat(timespec="microseconds"),
        "actor_type": event.actor_type,
        "actor_id": event.actor_id,
        "actor_name": event.actor_name,
        "action": event.action,
        "namespace_id": event.namespace_id,
        "namespace_slug": event.namespace_slug,
        "subject_id": str(event.subject_id) if event.subject_id else None,
        "object_type": event.object_type,
        "object_id": event.object_id,
        "request_id": event.request_id,
        "ip": event.ip,
        "outcome": event.outcome,
        "details": event.details,
        "prev_hash": event.prev_hash,
        "hash": event.hash,
    }
