"""Reading the audit log: scoped lists and the chain verifier."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from apps.audit import chain
from apps.audit.models import AuditEvent, ChainHead, ChainVerification, VerificationStatus
from apps.audit.services import event_as_chain_fields


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


def _chain_rows(batch_size: int = 2000) -> Iterator[dict[str, Any]]:
    last_id = 0
    while True:
        batch = list(AuditEvent.objects.filter(id__gt=last_id).order_by("id")[:batch_size])
        if not batch:
            return
        for event in batch:
            yield event_as_chain_fields(event)
        last_id = batch[-1].id


def audit_chain_verify() -> tuple[int, chain.BrokenLink | None]:
    """Walk the whole chain in id order; (links checked, first broken link or None).

    Also compares the chain head with the newest event: events cut off the end of the log
    (which leave the remaining chain intact) show up as a head that points past them.
    """
    checked, broken = chain.verify(_chain_rows())
    if broken is not None:
        return checked, broken
    head = ChainHead.objects.filter(pk=1).values_list("last_id", "last_hash").first()
    newest = AuditEvent.objects.order_by("-id").values_list("id", "hash").first()
    if head is not None and head[0] > 0 and (newest is None or tuple(newest) != tuple(head)):
        return checked, chain.BrokenLink(
            head[0], "the chain head points at an event that is missing or altered (log truncated)"
        )
    return checked, None


def chain_status_latest() -> ChainVerification | None:
    """The newest finished walk of the chain (intact, broken, or unable to finish), or None
    before the first. Its `through_event_id`/`through_at` say how far the chain is known
    intact; a broken one names its first broken link. One indexed query."""
    return (
        ChainVerification.objects.filter(finished_at__isnull=False)
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
