"""Writing audit events. Called by every other service inside its own transaction."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from apps.audit import chain
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, ChainHead, Outcome

EVENT_TABLE = AuditEvent._meta.db_table
HEAD_TABLE = ChainHead._meta.db_table
# An event's columns: the chained fields and the hash over them (one list, in chain.py).
COLUMNS = (*chain.CHAINED_FIELDS, "hash")
_CASTS = {"ip": "::inet", "details": "::jsonb"}

_TAKE_NEXT_LINK = (
    f"UPDATE {HEAD_TABLE} SET last_id = last_id + 1 WHERE id = 1 RETURNING last_id, last_hash"  # noqa: S608
)
# The head row goes missing only when the table is emptied (test flushes): rebuild it from the
# newest event, so the chain continues where the events end.
_REBUILD_HEAD = f"""
    INSERT INTO {HEAD_TABLE} (id, last_id, last_hash)
    SELECT 1, COALESCE(MAX(id), 0),
           COALESCE((SELECT hash FROM {EVENT_TABLE} ORDER BY id DESC LIMIT 1), %s)
    FROM {EVENT_TABLE}
    ON CONFLICT (id) DO NOTHING
"""  # noqa: S608 (table names only)
_APPEND = f"""
    WITH appended AS (
        INSERT INTO {EVENT_TABLE} ({", ".join(COLUMNS)})
        VALUES ({", ".join("%s" + _CASTS.get(column, "") for column in COLUMNS)})
    )
    UPDATE {HEAD_TABLE} SET last_hash = %s WHERE id = 1
"""  # noqa: S608 (table and column names only)


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
        values = [
            json.dumps(event.details) if column == "details" else getattr(event, column)
            for column in COLUMNS
        ]
        cursor.execute(_APPEND, [*values, event.hash])
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
    """An event's columns as the chain hashes them (times and ids as text)."""
    fields = {column: getattr(event, column) for column in COLUMNS}
    fields["created_at"] = event.created_at.isoformat(timespec="microseconds")
    fields["subject_id"] = str(event.subject_id) if event.subject_id else None
    return fields
