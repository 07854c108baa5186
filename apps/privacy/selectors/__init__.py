"""Reads of the privacy portal, always of one subject (the portal session's): what is
remembered, grouped by kind, with where each memory came from, how often it was used and
when it goes; its history; who used it; what the PII policy blocked. Decrypted text is
returned for the page; it is the subject's own."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from apps.audit.models import ActorType
from apps.memories import vector_spaces
from apps.memories.embeddings import get_provider
from apps.memories.fields import vector_literal
from apps.memories.keyword_index import query_terms
from apps.memories.models import SEARCH_FIELDS, Kind, Memory, MemoryVersion, Status, Subject
from apps.memories.multilingual import get_multilingual_provider, is_latin_script
from apps.memories.row_encryption import KeyCache, open_memory, open_version
from apps.pipeline.models import Message
from apps.privacy.models import ScheduledErasure

# Who used what, in its own module; the views read it from here.
from apps.privacy.selectors.activity import SERVED_PURPOSES
from apps.privacy.selectors.activity import Usage as Usage
from apps.privacy.selectors.activity import Use as Use
from apps.privacy.selectors.activity import access_history as access_history
from apps.privacy.selectors.activity import memory_usage as memory_usage
from apps.privacy.selectors.receipts import Receipt as Receipt
from apps.privacy.selectors.receipts import erasure_receipt as erasure_receipt
from apps.privacy.selectors.receipts import receipt_document as receipt_document
from apps.recall.models import RecallLog
from apps.recall.relevance import MULTILINGUAL_COSINE_SCALE, MULTILINGUAL_COSINE_SHIFT
from memoryhub.cursor_pages import PageOrder, cursor_page

PER_KIND = 10  # memories of each kind on the grouped page
PAGE = 50  # memories on a page of one kind
SEARCH_LIMIT = 100
# Memories this close in meaning to a topic count as about it (on all-MiniLM-L6-v2's cosine
# scale), besides those that contain every word of it.
TOPIC_COSINE = 0.5
MEMORY_TABLE = Memory._meta.db_table


def current(subject: Subject) -> QuerySet[Memory]:
    """What is remembered about the subject now: not superseded, ended or archived."""
    return (
        Memory.objects.filter(namespace_id=subject.namespace_id, subject=subject)
        .filter(valid_to__isnull=True)
        .exclude(status=Status.ARCHIVED)
        .defer(*SEARCH_FIELDS)
    )


def history(subject: Subject) -> QuerySet[Memory]:
    """What was remembered and no longer holds: superseded, ended, or archived."""
    return (
        Memory.objects.filter(namespace_id=subject.namespace_id, subject=subject)
        .filter(Q(valid_to__isnull=False) | Q(status=Status.ARCHIVED))
        .defer(*SEARCH_FIELDS)
    )


def memory_of(subject: Subject, memory_id: str) -> Memory | None:
    """One memory of the subject (current or history), or None for anyone else's."""
    try:
        pk = uuid.UUID(str(memory_id))
    except ValueError:
        return None
    return (
        Memory.objects.filter(namespace_id=subject.namespace_id, subject=subject, pk=pk)
        .defer(*SEARCH_FIELDS)
        .first()
    )


@dataclass(frozen=True)
class Item:
    memory: Memory
    content: str
    origin: str  # where it came from, in words
    uses: int  # answers it went into
    keeps: str  # until when it is kept, in words
    corrected: bool
    disputed: bool = False  # a later turn put it in doubt: not used until a person decides


@dataclass
class Group:
    kind: str
    label: str
    count: int
    items: list[Item] = field(default_factory=list)


KIND_LABELS = {
    Kind.SEMANTIC: lambda: _("Facts and preferences"),
    Kind.EPISODIC: lambda: _("Things you said or did"),
    Kind.PROCEDURAL: lambda: _("How you want to be answered"),
}


def kind_label(kind: str) -> str:
    return KIND_LABELS[Kind(kind)]() if kind in Kind.values else kind


@dataclass(frozen=True)
class Summary:
    counts: dict[str, int]
    total: int
    history: int
    sessions: int
    paused: bool
    erasure: ScheduledErasure | None


def summary(subject: Subject) -> Summary:
    """The overview's figures: current memories by kind, history, conversations."""
    counts = {
        row["kind"]: row["n"] for row in current(subject).values("kind").annotate(n=Count("id"))
    }
    return Summary(
        counts={kind: counts.get(kind, 0) for kind in Kind.values},
        total=sum(counts.values()),
        history=history(subject).count(),
        sessions=subject.sessions.count(),
        paused=subject.paused,
        erasure=ScheduledErasure.objects.filter(subject=subject).first(),
    )


def _date(moment: datetime | None) -> str:
    return date_format(timezone.localtime(moment), "DATE_FORMAT") if moment else ""


def origin_time(memory: Memory, said_at: datetime | None = None) -> datetime:
    """The moment `origin` names: for what came from a conversation, when the person said it
    (`said_at`, the turn's time: an app may send a conversation days after it was held, and
    a fact's own `occurred_at` is when the thing it tells happens); else when it happened or
    was added."""
    if (memory.source or {}).get("session"):
        turn = memory.occurred_at if memory.kind == Kind.EPISODIC else None
        return said_at or turn or memory.created_at
    return memory.occurred_at or memory.created_at


def said_times(subject: Subject, memories: list[Memory]) -> dict[uuid.UUID, datetime]:
    """For the memories made from a turn still kept, the time that turn was said."""
    turns = {m.pk: str(m.source["message"]) for m in memories if (m.source or {}).get("message")}
    ids = []
    for turn in set(turns.values()):
        try:
            ids.append(uuid.UUID(turn))
        except ValueError:
            continue
    times = {
        str(pk): at
        for pk, at in Message.objects.filter(
            namespace_id=subject.namespace_id, pk__in=ids
        ).values_list("id", "created_at")
    }
    return {pk: times[turn] for pk, turn in turns.items() if turn in times}


def origin(memory: Memory, said_at: datetime | None = None) -> str:
    """Where a memory came from, in words, with the day of `origin_time`."""
    source: dict[str, Any] = memory.source or {}
    day = _date(origin_time(memory, said_at))
    if source.get("document"):
        title = (memory.metadata or {}).get("title")
        if title:
            return _("From the document “%(title)s”, added on %(day)s") % {
                "title": title,
                "day": day,
            }
        return _("From a document added on %(day)s") % {"day": day}
    if source.get("summarized"):
        return _("A summary of %(n)d earlier turns of a conversation, made on %(day)s") % {
            "n": source["summarized"],
            "day": day,
        }
    if source.get("session"):  # the app's id for it means nothing to the person
        if memory.kind == Kind.EPISODIC:
            return _("What you said in a conversation on %(day)s") % {"day": day}
        return _("Learned from what you said in a conversation on %(day)s") % {"day": day}
    return _("Saved by the app on %(day)s") % {"day": day}


def keeps(memory: Memory, retention_days: int | None) -> str:
    """Until when a memory is kept, in words."""
    if memory.expires_at:
        return _("Forgotten on %(day)s") % {"day": _date(memory.expires_at)}
    if retention_days:
        return _("Kept until about %(day)s (the app keeps memories %(n)d days)") % {
            "day": _date(memory.created_at + timedelta(days=retention_days)),
            "n": retention_days,
        }
    return _("Kept until you or the app delete it")


def uses(subject: Subject, ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    """How many recalls and contexts the app was served each of these memories in (an
    administrator's playground trials are no answers)."""
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m, count(*) FROM {RecallLog._meta.db_table} r, unnest(r.memory_ids) m"  # noqa: S608
            " WHERE r.namespace_id = %s AND r.subject_id = %s AND r.memory_ids && %s::uuid[]"
            " AND r.purpose = ANY(%s) AND m = ANY(%s::uuid[]) GROUP BY m",
            [subject.namespace_id, subject.pk, ids, list(SERVED_PURPOSES), ids],
        )
        return {row[0]: row[1] for row in cursor.fetchall()}


def items(subject: Subject, memories: list[Memory], keys: KeyCache) -> list[Item]:
    counted = uses(subject, [m.pk for m in memories])
    said = said_times(subject, memories)
    retention = subject.namespace.retention_days
    return [
        Item(
            memory=m,
            content=open_memory(keys, m),
            origin=origin(m, said.get(m.pk)),
            uses=counted.get(m.pk, 0),
            keeps=keeps(m, retention),
            corrected="corrected_at" in (m.metadata or {}),
            disputed=m.status == Status.DISPUTED,
        )
        for m in memories
    ]


def grouped(subject: Subject, keys: KeyCache) -> list[Group]:
    """The current memories by kind: each kind's count and its newest PER_KIND."""
    counts = dict(current(subject).values_list("kind").annotate(n=Count("id")))
    groups = []
    for kind in Kind.values:
        newest = list(current(subject).filter(kind=kind).order_by("-created_at", "-id")[:PER_KIND])
        groups.append(
            Group(kind, kind_label(kind), counts.get(kind, 0), items(subject, newest, keys))
        )
    return groups


NEWEST_FIRST = PageOrder("-created", "created_at", descending=True)


@dataclass(frozen=True)
class Page:
    items: list[Item]
    total: int
    next_cursor: str | None


def kind_page(
    subject: Subject, kind: str, keys: KeyCache, *, after: str = "", past: bool = False
) -> Page:
    """A page of one kind's memories (or of the history), newest first, by keyset."""
    memories = history(subject) if past else current(subject).filter(kind=kind)
    page = cursor_page(memories, order=NEWEST_FIRST, size=PAGE, after=after)
    return Page(items(subject, page.rows, keys), memories.count(), page.next_cursor)


def search(subject: Subject, query: str, keys: KeyCache) -> list[Item]:
    """The subject's memories (current and history) about `query`: those holding every word
    of it, and those close to it in meaning; newest first."""
    query = query.strip()
    if not query:
        return []
    terms = query_terms(query, keys.index_key(subject.namespace_id))
    mine = Memory.objects.filter(namespace_id=subject.namespace_id, subject=subject)
    ids: set[uuid.UUID] = set()
    if terms:
        ids |= set(
            mine.filter(token_index__contains=terms).values_list("id", flat=True)[:SEARCH_LIMIT]
        )
    ids |= _near_topic(subject, query)
    found = list(mine.filter(pk__in=ids).defer(*SEARCH_FIELDS))
    # What replaced what was found comes along: it is about the same thing, and true now.
    replaced = _what_replaced(subject, found) - {m.pk for m in found}
    found += list(mine.filter(pk__in=replaced).defer(*SEARCH_FIELDS))
    found.sort(key=lambda m: (m.created_at, m.pk), reverse=True)
    # What is true now before what was: current memories first, then those in doubt or
    # outdated, then history, each newest first (a stale "allergic to peanuts" never heads
    # the list above its correction).
    found.sort(key=standing)
    return items(subject, found, keys)


def _what_replaced(subject: Subject, found: list[Memory]) -> set[uuid.UUID]:
    """The current memories that replaced, ended or outdated those found: a superseded
    fact's successor; the turn and facts of the message that ended a fact, outdated a turn
    or put a fact in doubt."""
    successors = {memory.superseded_by_id for memory in found if memory.superseded_by_id}
    keys = ("ended_by", "disputed_by")
    messages = {str(m.metadata[key]) for m in found for key in keys if m.metadata.get(key)}
    if not (successors or messages):
        return set()
    return set(
        Memory.objects.filter(namespace_id=subject.namespace_id, subject=subject)
        .filter(Q(pk__in=successors) | Q(source__message__in=sorted(messages)))
        .filter(valid_to__isnull=True, status=Status.ACTIVE)
        .values_list("id", flat=True)[:SEARCH_LIMIT]
    )


def in_history(memory: Memory) -> bool:
    """Whether a memory is history: superseded, ended or archived (`history`'s rows)."""
    return memory.valid_to is not None or memory.status == Status.ARCHIVED


CURRENT, IN_DOUBT, HISTORY = 0, 1, 2


def standing(memory: Memory) -> int:
    """CURRENT; IN_DOUBT (disputed, or waiting for review); HISTORY (shown as "no longer
    current": ended, superseded, or a turn that ended with the fact it stated)."""
    if in_history(memory):
        return HISTORY
    return CURRENT if memory.status == Status.ACTIVE else IN_DOUBT


def _near_topic(subject: Subject, query: str) -> set[uuid.UUID]:
    """The subject's memories close in meaning to `query` (TOPIC_COSINE), each compared by
    the model that reads both (apps/memories/vector_spaces.py): the primary model for two
    Latin-script texts, the multilingual one otherwise, its cosine on the primary's scale.
    The subject's own rows are scanned exactly (OFFSET 0 keeps the planner off the
    namespace's HNSW index, which would walk every subject's vectors to find the few)."""
    spaces = vector_spaces.serving()
    latin = is_latin_script(query)
    sides: list[tuple[str, str, str, np.ndarray, float]] = []
    if spaces.mode == "primary" or (spaces.mode == "routed" and latin):
        only = " AND latin_script" if spaces.mode == "routed" else ""
        vector = get_provider().embed_query(query)
        sides.append(
            ("embedding", f"embedding_model = %s{only}", spaces.primary, vector, TOPIC_COSINE)
        )
    provider = get_multilingual_provider()
    if spaces.mode != "primary" and provider is not None:
        only = " AND NOT latin_script" if spaces.mode == "routed" and latin else ""
        cosine = (TOPIC_COSINE - MULTILINGUAL_COSINE_SHIFT) / MULTILINGUAL_COSINE_SCALE
        vector = provider.embed_query(query)
        sides.append(
            (
                "multilingual_embedding",
                f"multilingual_model = %s{only}",
                spaces.multilingual,
                vector,
                cosine,
            )
        )
    found: set[uuid.UUID] = set()
    with connection.cursor() as cursor:
        for column, same_model, model, vector, cosine in sides:
            cursor.execute(
                f"SELECT id FROM (SELECT id, {column} <=> %s::vector AS distance"  # noqa: S608
                f" FROM {MEMORY_TABLE} WHERE namespace_id = %s AND subject_id = %s"
                f" AND {column} IS NOT NULL AND {same_model} OFFSET 0)"
                " mine WHERE distance <= %s ORDER BY distance LIMIT %s",
                [
                    vector_literal(np.asarray(vector, dtype=np.float32)),
                    subject.namespace_id,
                    subject.pk,
                    model,
                    1 - cosine,
                    SEARCH_LIMIT,
                ],
            )
            found |= {row[0] for row in cursor.fetchall()}
    return found


@dataclass(frozen=True)
class Version:
    version: int
    content: str
    when: datetime
    by: str  # who changed it, in words
    reason: str


def by_whom(changed_by: str) -> str:
    kind = changed_by.partition(":")[0]
    names: dict[str, str] = {
        ActorType.SUBJECT: _("you"),
        ActorType.USER: _("an administrator"),
        ActorType.API_KEY: _("the app"),
    }
    return names.get(kind, _("MemoryHub"))


def versions(memory: Memory, keys: KeyCache) -> list[Version]:
    rows = MemoryVersion.objects.filter(memory=memory).order_by("-version")
    return [
        Version(
            v.version,
            open_version(keys, v, memory.subject_id, memory.namespace_id),
            v.created_at,
            by_whom(v.changed_by),
            v.reason,
        )
        for v in rows
    ]


def related(subject: Subject, memory: Memory, keys: KeyCache) -> dict[str, Item | None]:
    """The memory that replaced this one, and the one it replaced, if they are still here."""
    metadata = memory.metadata or {}
    successor = str(memory.superseded_by_id) if memory.superseded_by_id else None
    before = (metadata.get("supersedes") or [None])[0]
    found = {}
    for name, pk in (("successor", successor), ("predecessor", before)):
        other = memory_of(subject, pk) if pk else None
        found[name] = items(subject, [other], keys)[0] if other else None
    return found


# What the portal says about personal data, in its own module: it reads memories as items.
from apps.privacy.selectors.personal_data import PersonalData as PersonalData  # noqa: E402
from apps.privacy.selectors.personal_data import personal_data as personal_data  # noqa: E402
