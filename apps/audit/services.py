"""Writing audit events. Called by every other service inside its own transaction."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import OperationalError, connection, transaction
from django.utils import timezone

from apps.audit import chain, listeners
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

# Lock the chain's head (until commit: appends to this chain wait, others do not), then take
# the event's id from the table's sequence: RETURNING runs after the lock is held, so ids rise
# along each chain.
_TAKE_NEXT_LINK = f"""
    UPDATE {HEAD_TABLE} SET last_id = last_id WHERE id = %s
    RETURNING nextval(pg_get_serial_sequence('{EVENT_TABLE}', 'id')), last_hash
"""  # noqa: S608 (table names only)
# A chain's head row is made by its first append (or, after the table was emptied by a test
# flush, from the chain's newest event): it starts at the sealed chain's final hash on an
# install that sealed one, else at the genesis.
_MAKE_HEAD = f"""
    INSERT INTO {HEAD_TABLE} (id, last_id, last_hash)
    SELECT %s, COALESCE(MAX(id), 0),
           COALESCE(
               (SELECT hash FROM {EVENT_TABLE} WHERE chain = %s ORDER BY id DESC LIMIT 1),
               (SELECT hash FROM {EVENT_TABLE} WHERE action = %s ORDER BY id LIMIT 1),
               %s
           )
    FROM {EVENT_TABLE} WHERE chain = %s
    ON CONFLICT (id) DO NOTHING
"""  # noqa: S608 (table names only)
_APPEND = f"""
    WITH appended AS (
        INSERT INTO {EVENT_TABLE} ({", ".join(COLUMNS)}, chain)
        VALUES ({", ".join("%s" + _CASTS.get(column, "") for column in COLUMNS)}, %s)
    )
    UPDATE {HEAD_TABLE} SET last_id = %s, last_hash = %s WHERE id = %s
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
    """Append one event to its namespace's chain (the global one without a namespace), in
    the caller's transaction.

    Invariant: `details` is content-free (ids, field names, counts, hashes). Callers never
    pass memory text, keys or embeddings. Outside a transaction it opens its own. The
    registered listeners (apps/audit/listeners.py) hear of the event in that transaction.

    Two statements: the first locks the chain's head (serialising appends to that chain
    until commit) and returns the next id with the previous hash; the second inserts the
    event and moves the head. Under READ COMMITTED the locked UPDATE always sees the newest
    committed head.
    """
    key = chain.chain_of(getattr(namespace, "pk", None))
    # No savepoint: nothing to roll back to inside the caller's transaction, and it saves two
    # round trips per write.
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(_TAKE_NEXT_LINK, [key])
        row = cursor.fetchone()
        if row is None:
            cursor.execute(_MAKE_HEAD, [key, key, chain.SEAL_ACTION, chain.GENESIS, key])
            cursor.execute(_TAKE_NEXT_LINK, [key])
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
            chain=key,
        )
        event.hash = chain.link_hash(event_as_chain_fields(event=event))
        values = [
            json.dumps(event.details) if column == "details" else getattr(event, column)
            for column in COLUMNS
        ]
        cursor.execute(_APPEND, [*values, key, event_id, event.hash, key])
        event._state.adding = False
        event._state.db = connection.alias
        # In the same transaction: what the listeners write (the webhooks' outbox) commits
        # with the change.
        listeners.notify(event, namespace)
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


def event_as_chain_fields(*, event: AuditEvent) -> dict[str, Any]:
    """An event's columns as the chain hashes them (times and ids as text), and its chain."""
    fields = {column: getattr(event, column) for column in (*COLUMNS, "chain")}
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
    *,
    requested_by: str,
    actor: Actor | None = None,
    full: bool = False,
    chain_key: int | None = None,
) -> ChainVerification:
    """Record a walk of the chains as running (and audit the request, in one transaction).

    `requested_by` is "beat" or "user:<name>"; `actor` defaults to a system actor of that
    name. `full` asks for a walk from the genesis; otherwise the walk decides when it runs
    (`chain_verification_execute`). `chain_key` walks one chain (always whole); None walks
    every chain. Nothing is walked here: a task or the caller runs it. Walks running for
    longer than ABANDONED_AFTER are marked `failed` ("abandoned").
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
            full=full or chain_key is not None,
            chain=chain_key,
        )
        details: dict[str, Any] = {"full": verification.full}
        if chain_key is not None:
            details["chain"] = chain_key
        audit_record(
            actor=actor or Actor.system(requested_by[:200]),
            action="audit.chain_verify",
            object_type="chain_verification",
            object_id=str(verification.pk),
            details=details,
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


def chain_verification_run(
    *, requested_by: str, full: bool = False, chain_key: int | None = None
) -> ChainVerification:
    """Start and walk a verification in this process (the beat task, commands, tests)."""
    verification = chain_verification_start(
        requested_by=requested_by, full=full, chain_key=chain_key
    )
    return chain_verification_execute(verification_id=verification.pk) or verification


def _anchor(verification: ChainVerification) -> _Anchor | None:
    """The end of the newest intact walk of every chain, if an incremental walk may start
    there."""
    if verification.full or verification.chain is not None:
        return None
    intact = ChainVerification.objects.filter(
        status=VerificationStatus.SUCCEEDED, finished_at__isnull=False, chain=None
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
        or chain.link_hash(event_as_chain_fields(event=event)) != event.hash
    ):
        return None  # the anchor itself changed: only a full walk can say where
    return _Anchor(event.pk, event.hash, event.created_at)


def chain_seal() -> tuple[int, str] | None:
    """The id and hash of the event that sealed the single chain of an older install."""
    seal = (
        AuditEvent.objects.filter(action=chain.SEAL_ACTION, chain=chain.SEALED_CHAIN)
        .order_by("id")
        .values_list("id", "hash")
        .first()
    )
    return (seal[0], seal[1]) if seal else None


def chain_walk_begin(*, previous_through: int = 0) -> chain.Walk:
    """A walk's state: where new chains start (the seal's hash or the genesis) and, for a walk
    that starts after event `previous_through`, each chain's newest hash up to it."""
    seal = chain_seal()
    walk = chain.Walk(start=seal[1] if seal else chain.GENESIS, seal_id=seal[0] if seal else None)
    if previous_through:
        with connection.cursor() as cursor:
            cursor.execute(_NEWEST_PER_CHAIN, [previous_through])
            walk.previous.update(dict(cursor.fetchall()))
    return walk


# Each chain's newest event up to an id: one index probe a chain, from the heads (every chain
# with events has one: its first append makes it).
_NEWEST_PER_CHAIN = f"""
    SELECT head.id, newest.hash FROM {HEAD_TABLE} AS head
    CROSS JOIN LATERAL (
        SELECT hash FROM {EVENT_TABLE} WHERE chain = head.id AND id <= %s
        ORDER BY id DESC LIMIT 1
    ) AS newest
"""  # noqa: S608 (table names only)


def chain_settled_newest() -> int:
    """The newest event id below which no append is still in flight.

    Ids come from a sequence, so an append in one chain may commit after a higher id in
    another. A SHARE lock on the heads waits for every open append (each holds a head row
    until commit) and holds new ones back for a moment: every id up to the newest one read
    under it is committed (or rolled back, a gap in the ids).
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {HEAD_TABLE} IN SHARE MODE")
        cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {EVENT_TABLE}")  # noqa: S608
        return int(cursor.fetchone()[0])


def _walk(verification: ChainVerification) -> ChainVerification:
    anchor = _anchor(verification)
    start = anchor or _GENESIS_ANCHOR
    newest = chain_settled_newest()
    events = AuditEvent.objects.filter(id__lte=newest)
    if verification.chain is not None:
        events = events.filter(chain=verification.chain)
    verification.full = anchor is None
    verification.from_event_id = anchor.event_id if anchor else None
    verification.to_check = (
        events.count() if verification.chain is not None else max(newest - start.event_id, 0)
    )
    _save_progress(verification, start)
    walk = chain_walk_begin(previous_through=start.event_id)
    through, broken = start, None
    while broken is None:
        batch = list(events.filter(id__gt=through.event_id).order_by("id")[:VERIFY_BATCH])
        if not batch:
            break
        for event in batch:
            if (broken := walk.step(event_as_chain_fields(event=event))) is not None:
                break
            through = _Anchor(event.pk, event.hash, event.created_at)
        verification.checked = walk.checked
        _save_progress(verification, through)
    if broken is None:
        broken = chain_truncation(chain_key=verification.chain)
    # `to_check` was an estimate from the ids (a rolled-back append leaves a gap): at the end
    # it is what was checked and the events it did not reach, so "N of M" counts events.
    verification.to_check = walk.checked + events.filter(id__gt=through.event_id).count()
    verification.finished_at = timezone.now()
    verification.status = (
        VerificationStatus.SUCCEEDED if broken is None else VerificationStatus.BROKEN
    )
    if broken is not None:
        verification.broken_event_id = broken.event_id
        verification.broken_reason = broken.reason[:200]
        verification.broken_chain = broken.chain
    _save_progress(verification, through, final=True)
    if broken is not None:
        _audit_broken(verification)
    return verification


def _audit_broken(verification: ChainVerification) -> None:
    """A walk that found a broken link says so in the global chain (the broken chain is a
    namespace's id, or 0), so that its listeners (webhooks) hear of it."""
    audit_record(
        actor=Actor.system(verification.requested_by or "audit"),
        action="audit.chain_broken",
        object_type="chain_verification",
        object_id=str(verification.pk),
        outcome=Outcome.FAILED,
        details={
            "chain": verification.broken_chain,
            "broken_event_id": verification.broken_event_id,
            "reason": verification.broken_reason,
            "checked": verification.checked,
            "verification_id": verification.pk,
        },
    )


def _save_progress(verification: ChainVerification, through: _Anchor, final: bool = False) -> None:
    """Save as the walk goes (a poller sees it): only while the verification still runs."""
    verification.through_event_id = through.event_id or None
    verification.through_at = through.event_at
    verification.through_hash = through.event_hash if through.event_id else ""
    fields = ["full", "from_event_id", "to_check", "checked"]
    fields += ["through_event_id", "through_at", "through_hash"]
    if final:
        fields += ["status", "finished_at", "broken_event_id", "broken_reason", "broken_chain"]
    values = {name: getattr(verification, name) for name in fields}
    ChainVerification.objects.filter(pk=verification.pk, status=VerificationStatus.RUNNING).update(
        **values
    )


# Each head against its chain's newest event, in one statement (one snapshot: an append moves
# both in one transaction).
_CUT_CHAINS = f"""
    SELECT head.id, head.last_id FROM {HEAD_TABLE} AS head
    LEFT JOIN LATERAL (
        SELECT id, hash FROM {EVENT_TABLE} WHERE chain = head.id ORDER BY id DESC LIMIT 1
    ) AS newest ON TRUE
    WHERE head.last_id <> 0 AND (%s IS NULL OR head.id = %s)
      AND (newest.id IS DISTINCT FROM head.last_id OR newest.hash IS DISTINCT FROM head.last_hash)
    ORDER BY head.id LIMIT 1
"""  # noqa: S608 (table names only)


def chain_truncation(*, chain_key: int | None = None) -> chain.BrokenLink | None:
    """A chain (`chain_key`, or any) whose head points past its newest event: events were
    cut off that chain's end."""
    with connection.cursor() as cursor:
        cursor.execute(_CUT_CHAINS, [chain_key, chain_key])
        row = cursor.fetchone()
    if row is None:
        return None
    return chain.BrokenLink(
        row[1],
        "the chain head points at an event that is missing or altered (log truncated)",
        row[0],
    )


def audit_export_record(
    *, actor: Actor, filters: list[str], through_id: int, namespace: Any | None = None
) -> AuditEvent:
    """Audit an export of the log: who, which filters (names only: their values may name
    people), up to which event. `namespace` when the export is of one namespace, so its
    owner sees the export too."""
    return audit_record(
        actor=actor,
        action="audit.export",
        namespace=namespace,
        object_type="audit_export",
        details={"filters": filters, "through_event_id": through_id},
    )
