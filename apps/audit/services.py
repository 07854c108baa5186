"""Writing audit events. Called by every other service inside its own transaction."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import OperationalError, connection, transaction
from django.db.models import Subquery
from django.utils import timezone

from apps.audit import chain
from apps.audit.actors import Actor
from apps.audit.models import (
    AuditEvent,
    ChainHead,
    ChainVerification,
    Outcome,
    VerificationStatus,
)

logger = logging.getLogger(__name__)

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


# --- Verifying the chain, as a recorded job ----------------------------------------------------

# An incremental walk trusts the events an earlier walk checked; a whole walk from the genesis
# re-checks them (edits to old events are caught by it) at least this often.
FULL_VERIFICATION_EVERY = timedelta(hours=24)
VERIFY_BATCH = 5000  # events per query; progress is saved after each batch
# A walk still "running" this long after it started was abandoned (its worker died, or no
# worker took it): the next verification to start marks it as unable to finish.
ABANDONED_AFTER = timedelta(hours=6)


@dataclass(frozen=True)
class _Anchor:
    """Where a walk starts: after this event, whose hash the next event must carry."""

    event_id: int
    event_hash: str
    event_at: datetime | None


_GENESIS_ANCHOR = _Anchor(0, chain.GENESIS, None)


def chain_verification_start(
    *, requested_by: str, actor: Actor | None = None, full: bool = False
) -> ChainVerification:
    """Record a walk of the chain as running (and audit the request, in one transaction).

    `requested_by` is "beat" or "user:<name>"; `actor` defaults to a system actor of that
    name. `full` asks for a walk from the genesis; otherwise the walk decides when it runs
    (`chain_verification_execute`). Nothing is walked here: a task or the caller runs it.
    Walks running for longer than ABANDONED_AFTER are marked `failed` ("abandoned").
    """
    with transaction.atomic():
        ChainVerification.objects.filter(
            status=VerificationStatus.RUNNING, started_at__lt=timezone.now() - ABANDONED_AFTER
        ).update(
            status=VerificationStatus.FAILED, finished_at=timezone.now(), broken_reason="abandoned"
        )
        verification = ChainVerification.objects.create(
            started_at=timezone.now(),
            status=VerificationStatus.RUNNING,
            requested_by=requested_by[:200],
            full=full,
        )
        audit_record(
            actor=actor or Actor.system(requested_by[:200]),
            action="audit.chain_verify",
            object_type="chain_verification",
            object_id=str(verification.pk),
            details={"full": full},
        )
    return verification


def chain_verification_execute(*, verification_id: int) -> ChainVerification | None:
    """Walk the chain for a running verification and record the result; None if it is gone.

    Incremental unless the verification asked for a full walk: it starts after the newest
    event an earlier intact walk checked (the hash of event N covers N-1's hash, so that
    event's hash is all the walk needs), provided that event is still there with the same
    hash and fields, and a full walk succeeded within FULL_VERIFICATION_EVERY; else it walks
    from the genesis. It checks every event up to the newest one when it starts, saving
    progress after each batch, then compares the chain head with the newest event
    (truncation). A finished verification is returned as it is, so running it twice is
    harmless. A database error other than a lost connection marks it `failed`.
    """
    verification = ChainVerification.objects.filter(pk=verification_id).first()
    if verification is None or verification.status != VerificationStatus.RUNNING:
        return verification
    try:
        return _walk(verification)
    except OperationalError:
        raise  # transient: the task retries the same verification
    except Exception as error:
        logger.exception("Audit chain verification %s failed.", verification_id)
        return chain_verification_fail(verification_id=verification_id, reason=type(error).__name__)


def chain_verification_fail(*, verification_id: int, reason: str) -> ChainVerification | None:
    """Mark a running verification as unable to finish (`reason`: short, content-free)."""
    ChainVerification.objects.filter(pk=verification_id, status=VerificationStatus.RUNNING).update(
        status=VerificationStatus.FAILED,
        finished_at=timezone.now(),
        broken_reason=reason[:200],
    )
    return ChainVerification.objects.filter(pk=verification_id).first()


def chain_verification_run(*, requested_by: str, full: bool = False) -> ChainVerification:
    """Start and walk a verification in this process (the beat task, commands, tests)."""
    verification = chain_verification_start(requested_by=requested_by, full=full)
    return chain_verification_execute(verification_id=verification.pk) or verification


def _anchor(full: bool) -> _Anchor | None:
    """The end of the newest intact walk, if an incremental walk may start there."""
    if full:
        return None
    intact = ChainVerification.objects.filter(
        status=VerificationStatus.SUCCEEDED, finished_at__isnull=False
    )
    recent_full = intact.filter(
        full=True, finished_at__gte=timezone.now() - FULL_VERIFICATION_EVERY
    ).exists()
    last = intact.exclude(through_event_id=None).order_by("-finished_at", "-id").first()
    if not recent_full or last is None or last.through_event_id is None:
        return None
    event = AuditEvent.objects.filter(pk=last.through_event_id).first()
    if (
        event is None
        or event.hash != last.through_hash
        or chain.link_hash(event_as_chain_fields(event)) != event.hash
    ):
        return None  # the anchor itself changed: only a full walk can say where
    return _Anchor(event.pk, event.hash, event.created_at)


def _walk(verification: ChainVerification) -> ChainVerification:
    anchor = _anchor(verification.full)
    start = anchor or _GENESIS_ANCHOR
    newest = AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
    verification.full = anchor is None
    verification.from_event_id = anchor.event_id if anchor else None
    verification.to_check = max(newest - start.event_id, 0)
    _save_progress(verification, start)
    through, checked, broken = start, 0, None
    while broken is None:
        batch = list(
            AuditEvent.objects.filter(id__gt=through.event_id, id__lte=newest).order_by("id")[
                :VERIFY_BATCH
            ]
        )
        if not batch:
            break
        for event in batch:
            fields = event_as_chain_fields(event)
            if fields["prev_hash"] != through.event_hash:
                broken = chain.BrokenLink(event.pk, "prev_hash does not match the previous event")
            elif chain.link_hash(fields) != event.hash:
                broken = chain.BrokenLink(event.pk, "hash does not match the event's fields")
            if broken is not None:
                break
            through = _Anchor(event.pk, event.hash, event.created_at)
            checked += 1
        verification.checked = checked
        _save_progress(verification, through)
    if broken is None:
        broken = _truncation()
    verification.finished_at = timezone.now()
    verification.status = (
        VerificationStatus.SUCCEEDED if broken is None else VerificationStatus.BROKEN
    )
    if broken is not None:
        verification.broken_event_id = broken.event_id
        verification.broken_reason = broken.reason[:200]
    _save_progress(verification, through, final=True)
    return verification


def _save_progress(verification: ChainVerification, through: _Anchor, final: bool = False) -> None:
    """Save as the walk goes (a poller sees it): only while the verification still runs."""
    verification.through_event_id = through.event_id or None
    verification.through_at = through.event_at
    verification.through_hash = through.event_hash if through.event_id else ""
    fields = ["full", "from_event_id", "to_check", "checked"]
    fields += ["through_event_id", "through_at", "through_hash"]
    if final:
        fields += ["status", "finished_at", "broken_event_id", "broken_reason"]
    values = {name: getattr(verification, name) for name in fields}
    ChainVerification.objects.filter(pk=verification.pk, status=VerificationStatus.RUNNING).update(
        **values
    )


def _truncation() -> chain.BrokenLink | None:
    """The chain head against the newest event, read in one statement (one snapshot: an
    append moves both in one transaction): a head past the newest event means events were
    cut off the end of the log."""
    newest = AuditEvent.objects.order_by("-id")
    head = (
        ChainHead.objects.filter(pk=1)
        .annotate(
            newest_id=Subquery(newest.values("id")[:1]),
            newest_hash=Subquery(newest.values("hash")[:1]),
        )
        .values_list("last_id", "last_hash", "newest_id", "newest_hash")
        .first()
    )
    if head is None or head[0] == 0 or (head[0], head[1]) == (head[2], head[3]):
        return None
    return chain.BrokenLink(
        head[0], "the chain head points at an event that is missing or altered (log truncated)"
    )
