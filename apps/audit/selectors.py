"""Reading the audit log: scoped lists and the chain verifier."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from apps.audit import chain
from apps.audit.models import AuditEvent, ChainHead, ChainVerification, VerificationStatus
from apps.audit.services import chain_truncation, chain_walk_begin, event_as_chain_fields


@dataclass(frozen=True)
class ChainState:
    """One chain's head: its key (a namespace's id, or chain.GLOBAL_CHAIN / SEALED_CHAIN)
    and its newest event."""

    key: int
    last_id: int
    last_hash: str
    last_at: datetime | None
    slug: str | None  # its newest event's namespace slug ("" without one)


def audit_event_list(
    *,
    namespace_id: int,
    action: str | None = None,
    outcome: str | None = None,
    subject_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditEvent]:
    """Events of one namespace, newest first. The caller has already been authorised for it."""
    events = AuditEvent.objects.filter(namespace_id=namespace_id)
    if action:
        events = events.filter(action=action)
    if outcome:
        events = events.filter(outcome=outcome)
    if subject_id:
        events = events.filter(subject_id=subject_id)
    if since:
        events = events.filter(created_at__gte=since)
    if until:
        events = events.filter(created_at__lt=until)
    return events.order_by("-id")


def _chain_rows(chain_key: int | None, batch_size: int = 2000) -> Iterator[dict[str, Any]]:
    events = (
        AuditEvent.objects.all()
        if chain_key is None
        else AuditEvent.objects.filter(chain=chain_key)
    )
    last_id = 0
    while True:
        batch = list(events.filter(id__gt=last_id).order_by("id")[:batch_size])
        if not batch:
            return
        for event in batch:
            yield event_as_chain_fields(event=event)
        last_id = batch[-1].id


def audit_chain_verify(chain_key: int | None = None) -> tuple[int, chain.BrokenLink | None]:
    """Walk every chain (or the one keyed `chain_key`) in id order; (links checked, first
    broken link or None).

    Also compares each chain's head with its newest event: events cut off the end of a
    chain (which leave the rest of it intact) show up as a head that points past them.
    """
    walk = chain_walk_begin()
    for event in _chain_rows(chain_key):
        if (broken := walk.step(event)) is not None:
            return walk.checked, broken
    return walk.checked, chain_truncation(chain_key=chain_key)


def chain_heads(
    namespace_ids: Collection[int] | None = None, *, most_recent: int | None = None
) -> list[ChainState]:
    """Each chain's head: its key, its newest event's id, time and namespace slug, in key
    order (the sealed chain, the global one, then namespaces), or the `most_recent` most
    recently written first. `namespace_ids` limits them to those chains (None: every
    chain). One query."""
    heads = ChainHead.objects.exclude(last_id=0)
    if namespace_ids is not None:
        heads = heads.filter(id__in=namespace_ids)
    heads = heads.order_by("-last_id")[:most_recent] if most_recent else heads.order_by("id")
    newest = AuditEvent.objects.filter(pk=OuterRef("last_id"))
    rows = heads.annotate(
        newest_at=Subquery(newest.values("created_at")[:1]),
        newest_slug=Subquery(newest.values("namespace_slug")[:1]),
    ).values_list("id", "last_id", "last_hash", "newest_at", "newest_slug")
    return [ChainState(*row) for row in rows]


def chain_count(namespace_ids: Collection[int] | None = None) -> int:
    heads = ChainHead.objects.exclude(last_id=0)
    if namespace_ids is not None:
        heads = heads.filter(id__in=namespace_ids)
    return heads.count()


def chain_status_latest() -> ChainVerification | None:
    """The newest finished walk of the chain (intact, broken, or unable to finish), or None
    before the first. Its `through_event_id`/`through_at` say how far the chain is known
    intact; a broken one names its first broken link. One indexed query."""
    return (
        ChainVerification.objects.filter(finished_at__isnull=False, chain=None)
        .order_by("-finished_at", "-id")
        .first()
    )


def chain_verification_get(*, verification_id: int) -> ChainVerification | None:
    """One walk of the chain, running or finished. Global (the chain spans every namespace):
    the caller has checked that the user may see the chain's state."""
    return ChainVerification.objects.filter(pk=verification_id).first()


def chain_verification_running() -> ChainVerification | None:
    """The newest verification still walking the chain, if any."""
    return (
        ChainVerification.objects.filter(status=VerificationStatus.RUNNING).order_by("-id").first()
    )
