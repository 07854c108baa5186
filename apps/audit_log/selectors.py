"""Reads of the audit viewer, always within what the viewer may see.

Who sees what: a superuser every event; a namespace's owner the events of the namespaces
they own (events without a namespace are the superusers'); anyone else none. The chain's
state (verifications) spans every namespace: superusers only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils.translation import gettext

from apps.audit import chain
from apps.audit.models import AuditEvent, ChainVerification, VerificationStatus
from apps.audit.selectors import chain_count, chain_heads
from apps.audit.services import chain_settled_newest, event_as_chain_fields
from apps.memories.models import Subject
from apps.namespaces.models import MembershipRole, Namespace
from apps.namespaces.selectors import namespaces_for_user
from memoryhub.cursor_pages import PageOrder, cursor_page

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
    everything: bool  # a superuser
    namespaces: dict[str, int]  # slug -> id: those the viewer may filter by (all, or owned)

    @property
    def any(self) -> bool:
        return self.everything or bool(self.namespaces)


def audit_scope_for(user: User) -> AuditScope:
    """What `user` may read of the audit log (one query)."""
    owned = namespaces_for_user(user, min_role=MembershipRole.OWNER).values_list("slug", "pk")
    return AuditScope(everything=user.is_superuser, namespaces=dict(owned))


def audit_scope_namespace(scope: AuditScope, slug: str) -> Namespace | None:
    """A namespace of the scope by slug (None outside it)."""
    if slug not in scope.namespaces:
        return None
    return Namespace.objects.filter(pk=scope.namespaces[slug]).first()


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
    subject_names: dict[str, str] = field(default_factory=dict)  # subject id -> external id

    @property
    def rows(self) -> Iterator[tuple[AuditEvent, str]]:
        """Each event with the name its subject goes by ("" for none, or one erased)."""
        for event in self.events:
            yield event, self.subject_names.get(str(event.subject_id), "")


def _subject_names(events: list[AuditEvent]) -> dict[str, str]:
    ids = {event.subject_id for event in events if event.subject_id}
    found = Subject.objects.filter(pk__in=ids).values_list("pk", "external_id")
    return {str(pk): external_id for pk, external_id in found}


# Ids rise with time (events are appended under the chain head's lock): the id alone orders
# the log, and its index answers each page.
NEWEST_FIRST = PageOrder("-id", "id", descending=True)


def audit_page(
    *, events: QuerySet[AuditEvent], size: int, after: str = "", before: str = ""
) -> AuditPage:
    """A page of `events`, newest first, by keyset on the id: `after` a cursor is the next
    page, `before` one the previous; a cursor that does not parse is the first page. The
    count is exact up to COUNT_CAP (a LIMITed subquery), else reported as capped."""
    total = events.order_by()[: COUNT_CAP + 1].count()
    page = cursor_page(events, order=NEWEST_FIRST, size=size, after=after, before=before)
    return AuditPage(
        events=page.rows,
        total=min(total, COUNT_CAP),
        capped=total > COUNT_CAP,
        start=page.start,
        end=page.end,
        next_cursor=page.next_cursor,
        previous_cursor=page.previous_cursor,
        subject_names=_subject_names(page.rows),
    )


@dataclass(frozen=True)
class EventView:
    event: AuditEvent
    details: str  # indented JSON
    hash_matches: bool  # its stored hash is the hash of its fields
    previous_id: int | None  # the neighbours the viewer may see
    next_id: int | None
    subject_name: str = ""  # the external id its subject goes by ("" for none, or erased)


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
        subject_name=_subject_names([event]).get(str(event.subject_id), ""),
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
    scope: AuditScope, status: ChainVerification | None
) -> tuple[list[ChainRow], int]:
    """The chains the viewer may see (superusers every one; owners their namespaces'), the
    most recently written first, at most CHAINS_SHOWN (a broken one always among them);
    with how many there are in all. Three queries, whatever the number of chains."""
    visible = None if scope.everything else list(scope.namespaces.values())
    heads = chain_heads(visible, most_recent=CHAINS_SHOWN)
    broken = status.broken_chain if status else None
    shown = {head.key for head in heads}
    if broken is not None and broken not in shown and (visible is None or broken in visible):
        heads = [*chain_heads([broken]), *heads[: CHAINS_SHOWN - 1]]
    names = dict(Namespace.objects.filter(pk__in=[h.key for h in heads]).values_list("pk", "name"))
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
