"""Reading the audit log: scoped lists and the chain verifier; the viewer's pages of events,
an event with its neighbours, the export's lines and the chains' states."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery
from django.utils.translation import gettext

from apps.audit import chain
from apps.audit.models import AuditEvent, ChainHead, ChainVerification, VerificationStatus
from apps.audit.services import (
    chain_settled_newest,
    chain_truncation,
    chain_walk_begin,
    event_as_chain_fields,
)
from memoryhub.cursor_pages import PageOrder, cursor_page


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


# --- The audit viewer's reads --------------------------------------------------------------
# Who sees what: a superuser every event; a namespace's owner the events of the namespaces
# they own (events without a namespace are the superusers'); anyone else none. The scope is
# built from memberships (apps.namespaces.selectors.audit_scope_for); the chain's state
# (verifications) spans every namespace: superusers only.

# Counting every match of a filter over a million events is a scan; the count stops here
# ("more than 10,000"), which an index range answers in a few milliseconds.
COUNT_CAP = 10_000
EXPORT_BATCH = 2000
# Events are appended in id order under the chain head's lock, each dated when it takes the
# lock, so times rise with ids, give or take the clock skew between web servers. A time
# range is narrowed to an id range with this much slack (audit_ids_for_time_range).
CLOCK_SLACK = timedelta(minutes=10)


@dataclass(frozen=True)
class AuditScope:
    """What a viewer may read of the log: everything, or the events of these namespaces; and
    where the subjects' external ids may be shown (owners and editors; viewers see the
    labels without them)."""

    everything: bool  # a superuser
    namespaces: dict[str, int]  # slug -> id: those the viewer may filter by (all, or a member's)
    identifying: frozenset[int] = frozenset()  # ids of those whose external ids they may see

    @property
    def any(self) -> bool:
        return self.everything or bool(self.namespaces)

    def shows_external_ids(self, namespace_id: int | None) -> bool:
        return self.everything or namespace_id in self.identifying


def audit_events_visible(scope: AuditScope) -> QuerySet[AuditEvent]:
    if scope.everything:
        return AuditEvent.objects.all()
    if not scope.namespaces:
        return AuditEvent.objects.none()
    return AuditEvent.objects.filter(namespace_id__in=sorted(scope.namespaces.values()))


@dataclass(frozen=True)
class AuditPage:
    events: list[AuditEvent]
    total: int  # exact up to COUNT_CAP
    capped: bool  # more than COUNT_CAP match
    start: int  # the number of the first row (1-based); 0 on an empty page
    end: int
    next_cursor: str | None
    previous_cursor: str | None
    # Of the events the filters match, those newer than the latest walk's last intact event
    # (exact up to COUNT_CAP): counted over the same query as `total`. None without a walk.
    unchecked: int | None = None

    @property
    def checked(self) -> int:
        """How many of the matching events the latest walk found intact (0 when capped:
        the box then speaks of the unchecked ones only)."""
        return max(self.total - (self.unchecked or 0), 0)


# Ids rise with time (events are appended under the chain head's lock): the id alone orders
# the log, and its index answers each page.
NEWEST_FIRST = PageOrder("-id", "id", descending=True)


def audit_page(
    *,
    events: QuerySet[AuditEvent],
    size: int,
    after: str = "",
    before: str = "",
    checked_through: int | None = None,
) -> AuditPage:
    """A page of `events`, newest first, by keyset on the id: `after` a cursor is the next
    page, `before` one the previous; a cursor that does not parse is the first page. The
    count is exact up to COUNT_CAP (a LIMITed subquery), else reported as capped. What the
    events' objects and subjects are called is the viewer's to resolve (the store's names,
    above this app), for the page's events only. With `checked_through` (the newest event a
    walk found intact) it also counts the matching events after it, over the same query."""
    total = events.order_by()[: COUNT_CAP + 1].count()
    unchecked = None
    if checked_through is not None:
        newer = events.filter(id__gt=checked_through).order_by()[: COUNT_CAP + 1]
        unchecked = min(newer.count(), COUNT_CAP)
    page = cursor_page(events, order=NEWEST_FIRST, size=size, after=after, before=before)
    return AuditPage(
        events=page.rows,
        total=min(total, COUNT_CAP),
        capped=total > COUNT_CAP,
        start=page.start,
        end=page.end,
        next_cursor=page.next_cursor,
        previous_cursor=page.previous_cursor,
        unchecked=unchecked,
    )


def audit_erased_subjects(*, subject_ids: Collection[uuid.UUID]) -> dict[str, str]:
    """The fingerprints of the erased subjects among `subject_ids` (subject id as text ->
    the HMAC fingerprint of its external id that its erasure receipt carries), read from
    their `subject.erase` events. The caller has scoped the ids (they come from events it
    may see). One query, by the subject index."""
    if not subject_ids:
        return {}
    erasures = AuditEvent.objects.filter(
        subject_id__in=list(subject_ids), action="subject.erase"
    ).values_list("subject_id", "details")
    return {
        str(subject_id): str((details or {}).get("subject_fingerprint", ""))
        for subject_id, details in erasures
    }


@dataclass(frozen=True)
class EventView:
    event: AuditEvent
    details: str  # indented JSON
    hash_matches: bool  # its stored hash is the hash of its fields
    previous_id: int | None  # the neighbours the viewer may see
    next_id: int | None


def audit_event_view(*, scope: AuditScope, event_id: int) -> EventView | None:
    """One event the viewer may see, with its neighbours in their scope; None otherwise."""
    visible = audit_events_visible(scope)
    event = visible.filter(pk=event_id).first()
    if event is None:
        return None
    return EventView(
        event=event,
        details=json.dumps(event.details, indent=2, ensure_ascii=False, sort_keys=True),
        hash_matches=chain.link_hash(event_as_chain_fields(event=event)) == event.hash,
        previous_id=visible.filter(id__lt=event.pk)
        .order_by("-id")
        .values_list("id", flat=True)
        .first(),
        next_id=visible.filter(id__gt=event.pk).order_by("id").values_list("id", flat=True).first(),
    )


def audit_newest_id() -> int:
    """The newest event an export may end at: every lower id's append has committed (an
    append in one chain may commit after a higher id in another)."""
    return chain_settled_newest()


def audit_export_lines(*, events: QuerySet[AuditEvent], through_id: int) -> Iterator[str]:
    """`events` up to `through_id` in chain order (oldest first), one JSON object a line with
    every field the hash covers (as the chain hashes them), `prev_hash` and `hash`: a line's
    hash can be recomputed from the line alone. Read in keyset batches (no long cursor)."""
    last = 0
    while True:
        batch = list(events.filter(id__gt=last, id__lte=through_id).order_by("id")[:EXPORT_BATCH])
        if not batch:
            return
        yield "".join(
            json.dumps(event_as_chain_fields(event=event), ensure_ascii=False, default=str) + "\n"
            for event in batch
        )
        last = batch[-1].pk


def audit_ids_for_time_range(
    *, since: datetime | None, until: datetime | None
) -> tuple[int | None, int | None]:
    """Ids outside which no event of [since, until) can lie: (above, below), each None when
    there is no bound. Without them a range in the past, listed newest first by id, walks
    the id index back through every newer event; with them it starts at the range.

    Any event dated more than CLOCK_SLACK before `since` bounds the ids from below (an event
    with a smaller id is at most CLOCK_SLACK newer than it, so before `since`); the latest
    such, by the time index, is the tightest. Likewise any event CLOCK_SLACK after `until`
    bounds them from above. Two index probes; the exact time filter still applies."""
    by_time = AuditEvent.objects.order_by()
    above = below = None
    if since is not None:
        above = (
            by_time.filter(created_at__lt=since - CLOCK_SLACK)
            .order_by("-created_at", "-id")
            .values_list("id", flat=True)
            .first()
        )
    if until is not None:
        below = (
            by_time.filter(created_at__gte=until + CLOCK_SLACK)
            .order_by("created_at", "id")
            .values_list("id", flat=True)
            .first()
        )
    return above, below


CHAINS_SHOWN = 20


@dataclass(frozen=True)
class ChainRow:
    """One chain as the viewer lists it: whose it is, its newest event, and what the latest
    verification says of it ("broken", "verified", "newer" events than it checked, or
    "unverified")."""

    key: int
    name: str
    last_id: int
    last_hash: str
    last_at: datetime | None
    state: str


def audit_chain_rows(
    scope: AuditScope,
    status: ChainVerification | None,
    *,
    name_namespaces: Callable[[Collection[int]], dict[int, str]],
) -> tuple[list[ChainRow], int]:
    """The chains the viewer may see (superusers every one; owners their namespaces'), the
    most recently written first, at most CHAINS_SHOWN (a broken one always among them);
    with how many there are in all. `name_namespaces` names the chains' namespaces (id ->
    name). Three queries, whatever the number of chains."""
    visible = None if scope.everything else list(scope.namespaces.values())
    heads = chain_heads(visible, most_recent=CHAINS_SHOWN)
    broken = status.broken_chain if status else None
    shown = {head.key for head in heads}
    if broken is not None and broken not in shown and (visible is None or broken in visible):
        heads = [*chain_heads([broken]), *heads[: CHAINS_SHOWN - 1]]
    names = name_namespaces([h.key for h in heads])
    rows = [
        ChainRow(
            key=head.key,
            name=_chain_name(head.key, names),
            last_id=head.last_id,
            last_hash=head.last_hash,
            last_at=head.last_at,
            state=_chain_state(head.key, head.last_id, status),
        )
        for head in heads
    ]
    return rows, chain_count(visible)


def _chain_name(key: int, names: dict[int, str]) -> str:
    if key == chain.GLOBAL_CHAIN:
        return gettext("Global (no namespace)")
    if key == chain.SEALED_CHAIN:
        return gettext("Sealed (the single chain of old)")
    return names.get(key) or gettext("Deleted namespace #%(id)s") % {"id": key}


def _chain_state(key: int, last_id: int, status: ChainVerification | None) -> str:
    if status is None or status.status == VerificationStatus.FAILED:
        return "unverified"
    if status.status == VerificationStatus.BROKEN:
        return "broken" if status.broken_chain == key else "unverified"
    if status.chain is not None and status.chain != key:
        return "unverified"
    return "verified" if (status.through_event_id or 0) >= last_id else "newer"
