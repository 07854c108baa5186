"""Who used a person's memories (the portal's "Who used them" page), newest first, a page at a
time. Two records say it, by ids only: the recall log (each recall or context an app was
served, and an administrator's playground trials: one entry each, with the memories it was
served) and the audit log (an administrator's views of the memories in the dashboard: one
entry per administrator and day, with how many times, on which pages, and which memories).
The memories still kept are opened for the page; it is the person's own."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from django.db.models import Count, Max, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.accounts.models import ApiKey
from apps.audit.models import ActorType, AuditEvent
from apps.memories.models import SEARCH_FIELDS, Memory, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.recall.models import RecallLog

HISTORY_PAGE = 30  # entries on a page
# What an app was served (its answers): recalls and assembled contexts.
SERVED_PURPOSES = ("recall", "context")
LISTED = 10  # memories listed in one entry; the others are counted

# The dashboard's pages that show memories (`dashboard.read.<page>`), in words.
PAGE_NAMES: dict[str, Callable[[], str]] = {
    "memory": lambda: _("a memory's page"),
    "memory_edit": lambda: _("editing a memory"),
    "memory_delete": lambda: _("deleting a memory"),
    "list": lambda: _("the list of memories"),
    "review": lambda: _("the review queue"),
    "bulk_review": lambda: _("a bulk review"),
    "purge_dry_run": lambda: _("a purge preview"),
    "subject": lambda: _("your conversations"),
    "recall_query": lambda: _("a question asked of your memories"),
}

PURPOSES: dict[str, Callable[[], str]] = {
    "recall": lambda: _("to answer you (recall)"),
    "context": lambda: _("to build the context of an answer"),
    "playground": lambda: _("to try out prompts in the playground"),
}


def page_name(action: str) -> str:
    page = action.removeprefix("dashboard.read.")
    if page in PAGE_NAMES:
        return PAGE_NAMES[page]()
    if page.startswith("eval_"):
        return _("quality tests")
    return _("another page")


@dataclass(frozen=True)
class Use:
    """One entry: an app's (or a playground's) use, or an administrator's views of a day."""

    when: datetime  # the newest access of the entry
    who: str
    purpose: str  # in words
    memories: list[tuple[uuid.UUID, str]]  # (id, content): those used, still kept, listed
    more: int = 0  # used and still kept, beyond those listed
    gone: bool = False  # memories were used, and none of them is kept now
    times: int = 1  # accesses in the entry
    pages: list[tuple[str, int]] = field(default_factory=list)  # (page in words, times)
    day: date | None = None  # set for an administrator's views of one day


@dataclass
class _Entry:
    """An entry before its memories are opened: the ids used, newest first."""

    when: datetime
    who: str
    purpose: str
    ids: list[uuid.UUID]
    times: int = 1
    pages: list[tuple[str, int]] = field(default_factory=list)
    day: date | None = None


def _moment(before: str) -> datetime | None:
    """The page's cursor: entries strictly older than it. A bad one is the first page."""
    try:
        until = parse_datetime(before) if before else None
    except ValueError:  # well-formed but no such time ("2024-13-01")
        return None
    if until is not None and timezone.is_naive(until):
        until = timezone.make_aware(until, timezone.get_current_timezone())
    return until


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


def _reads(subject: Subject, memory: uuid.UUID | None = None) -> QuerySet[AuditEvent]:
    """The dashboard's reads of this person's memories: alone (by the subject index), or
    among others' (by the partial index on details.subjects); with `memory`, those that
    showed it (the ids `_read_ids` reads)."""
    reads = AuditEvent.objects.filter(
        namespace_id=subject.namespace_id, action__startswith="dashboard.read."
    ).filter(
        Q(subject_id=subject.pk)
        | Q(details__has_key="subjects", details__subjects__contains=[str(subject.pk)])
    )
    if memory is not None:
        reads = reads.filter(
            Q(object_type="memory", object_id=str(memory))
            | Q(details__memory_ids__contains=[str(memory)])
        )
    return reads


def _read_ids(event: AuditEvent) -> list[uuid.UUID]:
    ids = [uuid.UUID(i) for i in (event.details or {}).get("memory_ids", [])]
    if event.object_type == "memory" and event.object_id:
        ids.append(uuid.UUID(event.object_id))
    return ids


def _logs(subject: Subject, memory: uuid.UUID | None = None) -> QuerySet[RecallLog]:
    """The recall log's rows of this person; with `memory`, those that served it."""
    logs = RecallLog.objects.filter(namespace_id=subject.namespace_id, subject=subject)
    if memory is not None:
        logs = logs.filter(memory_ids__contains=[memory])
    return logs


def _served(
    subject: Subject, until: datetime | None, limit: int, memory: uuid.UUID | None = None
) -> list[_Entry]:
    """The recall log's newest `limit` rows before `until`, each with what it served."""
    logs = _logs(subject, memory)
    if until:
        logs = logs.filter(created_at__lt=until)
    rows = list(
        logs.order_by("-created_at").only(
            "created_at", "actor_type", "actor_id", "purpose", "memory_ids"
        )[:limit]
    )
    names = dict(
        ApiKey.objects.filter(
            prefix__in={r.actor_id for r in rows if r.actor_type == ActorType.API_KEY}
        ).values_list("prefix", "name")
    )
    entries = []
    for log in rows:
        if log.actor_type == ActorType.API_KEY:
            who = _("the app “%(name)s”") % {"name": names.get(log.actor_id, log.actor_id)}
        else:
            who = _("an administrator")
        purpose = PURPOSES[log.purpose]() if log.purpose in PURPOSES else log.purpose
        entries.append(_Entry(log.created_at, who, purpose, list(log.memory_ids)))
    return entries


def _viewed(
    subject: Subject,
    until: datetime | None,
    since: datetime | None,
    limit: int,
    memory: uuid.UUID | None = None,
) -> list[_Entry]:
    """Administrators' dashboard views, one entry per administrator and day (in the viewer's
    time zone), the `limit` newest before `until`. An entry is a whole day's views: a day
    whose newest view is at or after `until` was on an earlier page, entirely."""
    zone = timezone.get_current_timezone()
    reads = _reads(subject, memory)
    if until:
        reads = reads.filter(created_at__lt=_day_start(timezone.localdate(until)) + timedelta(1))
    if since:  # no entry older than this can make the page (the caller knows)
        reads = reads.filter(created_at__gte=_day_start(timezone.localdate(since)))
    days = (
        reads.annotate(day=TruncDate("created_at", tzinfo=zone))
        .values("actor_type", "actor_id", "day")
        .annotate(last=Max("created_at"), times=Count("id"))
    )
    if until:
        days = days.filter(last__lt=until)
    chosen = list(days.order_by("-last")[:limit])
    if not chosen:
        return []
    wanted = {(row["actor_type"], row["actor_id"], row["day"]) for row in chosen}
    earliest, latest = min(row["day"] for row in chosen), max(row["day"] for row in chosen)
    events = reads.filter(
        created_at__gte=_day_start(earliest),
        created_at__lt=_day_start(latest) + timedelta(1),
        actor_id__in={row["actor_id"] for row in chosen},
    ).only(
        "created_at",
        "actor_type",
        "actor_id",
        "actor_name",
        "action",
        "object_type",
        "object_id",
        "details",
    )
    grouped: dict[tuple[str, str, date], list[AuditEvent]] = {}
    for event in events.order_by("-created_at", "-id"):
        key = (event.actor_type, event.actor_id, timezone.localdate(event.created_at))
        if key in wanted:
            grouped.setdefault(key, []).append(event)
    entries = []
    for row in chosen:
        views = grouped.get((row["actor_type"], row["actor_id"], row["day"]), [])
        if views:
            entries.append(_day_entry(row["day"], views))
    return entries


def _day_entry(day: date, views: list[AuditEvent]) -> _Entry:
    """One administrator's views of one day (newest first) as one entry."""
    pages = Counter(page_name(view.action) for view in views)
    ids = list(dict.fromkeys(i for view in views for i in _read_ids(view)))
    return _Entry(
        when=views[0].created_at,
        who=_("an administrator (%(name)s)") % {"name": views[0].actor_name or "?"},
        purpose=ngettext(
            "viewed in the dashboard %(n)d time", "viewed in the dashboard %(n)d times", len(views)
        )
        % {"n": len(views)},
        ids=ids,
        times=len(views),
        pages=pages.most_common(),
        day=day,
    )


def _opened(subject: Subject, entries: Iterable[_Entry], keys: KeyCache) -> list[Use]:
    """The entries with the memories they used that are still kept, LISTED of each opened."""
    used = {i for entry in entries for i in entry.ids}
    kept = set(
        Memory.objects.filter(
            namespace_id=subject.namespace_id, subject=subject, pk__in=used
        ).values_list("id", flat=True)
    )
    listed: list[tuple[_Entry, list[uuid.UUID], int]] = []
    for entry in entries:
        still = [i for i in entry.ids if i in kept]
        listed.append((entry, still[:LISTED], len(still) - LISTED if len(still) > LISTED else 0))
    to_open = {i for _entry, shown, _more in listed for i in shown}
    opened = {
        m.pk: open_memory(keys, m)
        for m in Memory.objects.filter(
            namespace_id=subject.namespace_id, subject=subject, pk__in=to_open
        ).defer(*SEARCH_FIELDS)
    }
    return [
        Use(
            when=entry.when,
            who=entry.who,
            purpose=entry.purpose,
            memories=[(i, opened[i]) for i in shown if i in opened],
            more=more,
            gone=bool(entry.ids) and not shown,
            times=entry.times,
            pages=entry.pages,
            day=entry.day,
        )
        for entry, shown, more in listed
    ]


def access_history(
    subject: Subject, keys: KeyCache, *, before: str = "", memory: uuid.UUID | None = None
) -> tuple[list[Use], str | None]:
    """Who used the subject's memories (with `memory`, the accesses that used that one),
    newest first, HISTORY_PAGE entries before the cursor `before` (an ISO time; anything
    else is the first page), and the next page's cursor. Each entry lists only the memories
    that access used."""
    limit = HISTORY_PAGE
    until = _moment(before)
    served = _served(subject, until, limit + 1, memory)
    # With more apps' uses than a page holds, nothing older than the last of them is shown.
    since = served[-1].when if len(served) > limit else None
    entries: list[_Entry] = served + _viewed(subject, until, since, limit + 1, memory)
    entries.sort(key=lambda e: e.when, reverse=True)
    more = len(entries) > limit
    entries = entries[:limit]
    cursor = entries[-1].when.isoformat() if more and entries else None
    return _opened(subject, entries, keys), cursor


@dataclass(frozen=True)
class Usage:
    """How one memory was used: the counts of the entries `access_history(memory=…)` lists,
    from the same rows, so a memory's page and its "who used it" list always agree."""

    answers: int  # recalls and contexts an app was served it in
    trials: int  # an administrator's playground trials that were served it
    views: int  # an administrator's views of it in the dashboard

    @property
    def any(self) -> bool:
        return bool(self.answers or self.trials or self.views)


def memory_usage(subject: Subject, memory: uuid.UUID) -> Usage:
    """How the subject's memory `memory` was used (see Usage)."""
    served = dict(_logs(subject, memory).values_list("purpose").annotate(n=Count("id")).order_by())
    return Usage(
        answers=sum(served.get(purpose, 0) for purpose in SERVED_PURPOSES),
        trials=sum(n for purpose, n in served.items() if purpose not in SERVED_PURPOSES),
        views=_reads(subject, memory).count(),
    )
