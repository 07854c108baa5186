"""Writing audit events. Called by every other service inside its own transaction."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from apps.audit import chain
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, Outcome

_TAKE_NEXT_LINK = (
    "UPDATE audit_chainhead SET last_id = last_id + 1 WHERE id = 1 RETURNING last_id, last_hash"
)
# The head row goes missing only when the table is emptied (test flushes): rebuild it from the
# newest event, so the chain continues where the events end.
_REBUILD_HEAD = """
    INSERT INTO audit_chainhead (id, last_id, last_hash)
    SELECT 1, COALESCE(MAX(id), 0),
           COALESCE((SELECT hash FROM audit_auditevent ORDER BY id DESC LIMIT 1), %s)
    FROM audit_auditevent
    ON CONFLICT (id) DO NOTHING
"""
_APPEND = """
    WITH appended AS (
        INSERT INTO audit_auditevent (
            id, created_at, actor_type, actor_id, actor_name, action, namespace_id,
            namespace_slug, subject_id, object_type, object_id, request_id, ip, outcome,
            details, prev_hash, hash
        ) VALUES (
            %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::inet, %s, %s::jsonb, %s, %s
        )
    )
    UPDATE audit_chainhead SET last_hash = %s WHERE id = 1
"""


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

    Two statements: the first locks the chain head (serialising appends until commit) and
    returns the next id with the previous hash; the second inserts the event and moves the
    head. Under READ COMMITTED the locked UPDATE always sees the newest committed head.
    """
    # No savepoint: nothing to roll back to inside the caller's transaction, and it saves two
    # round trips per write.
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(_TAKE_NEXT_LINK)
        row = cursor.fetchone()
        if row is None:
            cursor.execute(_REBUILD_HEAD, [chain.GENESIS])
            cursor.execute(_TAKE_NEXT_LINK)
            row = cursor.fetchone()
        event_id, previous = row
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
            prev_hash=previous,
        )
        event.hash = chain.link_hash(event_as_chain_fields(event))
        cursor.execute(
            _APPEND,
            [
                event.id, event.created_at, event.actor_type, event.actor_id, event.actor_name,
                event.action, event.namespace_id, event.namespace_slug, event.subject_id,
                event.object_type, event.object_id, event.request_id, event.ip, event.outcome,
                json.dumps(event.details), event.prev_hash, event.hash, event.hash,
            ],
        )  # fmt: skip
    event._state.adding = False
    event._state.db = connection.alias
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
