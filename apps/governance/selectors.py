"""Reads of the governance pages, always within a namespace the caller may see (the view has
checked): the explorer's pages, a memory's whole story, the review queue, a purge's dry run,
subjects. Decrypted text is returned for a page to show; the views audit that it was read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, F, Max, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from apps.accounts.models import ApiKey
from apps.governance.diff import Piece, word_diff
from apps.governance.sorting import DEFAULT as DEFAULT_SORT
from apps.governance.sorting import ORDERS
from apps.memories import vector_spaces
from apps.memories.models import SEARCH_FIELDS, Kind, Memory, MemoryVersion, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory, open_row, open_version
from apps.memories.services.validity import ENDED_WITH
from apps.namespaces import pii
from apps.namespaces.models import Namespace
from apps.pipeline.decisions import says_no_more
from apps.pipeline.models import (
    ConsolidationLog,
    Decision,
    Job,
    Message,
    Session,
    SessionSummary,
)
from apps.pipeline.timeline import Timeline, fact_timelines_of
from apps.recall.models import RecallFeedback, RecallLog
from memoryhub.cursor_pages import PageOrder, cursor_page

SNIPPET_CHARS = 240


def namespace_memories(namespace: Namespace) -> QuerySet[Memory]:
    """Every memory of the namespace, without the columns no page shows (vectors, tokens)."""
    return (
        Memory.objects.filter(namespace=namespace).defer(*SEARCH_FIELDS).select_related("subject")
    )


# --- The explorer's pages ----------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    memory: Memory
    content: str


@dataclass(frozen=True)
class ExplorerPage:
    rows: list[Row]
    total: int
    start: int  # the number of the first row (1-based); 0 on an empty page
    end: int
    next_cursor: str | None
    previous_cursor: str | None


def explorer_page(
    *,
    memories: QuerySet[Memory],
    size: int,
    after: str = "",
    before: str = "",
    sort: str = DEFAULT_SORT,
) -> ExplorerPage:
    """A page of `memories` in the order `sort` names (sorting.ORDERS; newest first by
    default), by keyset (the sort key, then the id to break ties): `after` a cursor is the
    next page, `before` one the previous. A cursor that does not parse, or was made under
    another order, is the first page. Rows are decrypted (each data key unwrapped once)."""
    if sort not in ORDERS or not ORDERS[sort].field:
        sort = DEFAULT_SORT  # relevance is a search's order, not the list's
    order = ORDERS[sort]
    page = cursor_page(
        memories,
        order=PageOrder(sort, order.field, order.descending),
        size=size,
        after=after,
        before=before,
    )
    return ExplorerPage(
        rows=memories_opened(page.rows),
        total=memories.count(),
        start=page.start,
        end=page.end,
        next_cursor=page.next_cursor,
        previous_cursor=page.previous_cursor,
    )


def _snippet(text: str) -> str:
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


def memories_opened(memories: list[Memory], keys: KeyCache | None = None) -> list[Row]:
    """The memories with a snippet of their content, decrypted (the page's data keys
    fetched in one query)."""
    keys = keys or KeyCache()
    for namespace_id in {memory.namespace_id for memory in memories}:
        keys.preload(
            namespace_id, [m.subject_id for m in memories if m.namespace_id == namespace_id]
        )
    return [Row(memory, _snippet(open_memory(keys, memory))) for memory in memories]


# --- A memory's story ----------------------------------------------------------------------


@dataclass(frozen=True)
class VersionEntry:
    version: MemoryVersion
    content: str
    changes: list[Piece]  # from the version before (empty for the first)


@dataclass(frozen=True)
class Turn:
    position: int
    role: str
    content: str
    is_source: bool


@dataclass(frozen=True)
class DecisionEntry:
    log: ConsolidationLog
    other_id: uuid.UUID | None  # the other memory the decision was about, if any
    other: Row | None  # that memory, opened; None when it is gone
    ended_here: bool = False  # the decision ended this memory (it names the older one)

    @property
    def said(self) -> Promise | str:
        """The decision as the page of the memory it is shown on reads it: "superseded an
        older memory" on the newer one's page, "superseded by a newer memory" on the older's."""
        if self.ended_here and self.log.decision == Decision.SUPERSEDE:
            return (
                _("Superseded by a newer memory") if self.other_id else _("Ended by a later turn")
            )
        return self.log.get_decision_display()


@dataclass
class MemoryStory:
    memory: Memory
    content: str
    versions: list[VersionEntry]
    predecessors: list[Row]
    successor: Row | None
    session: Session | None = None
    turns: list[Turn] = field(default_factory=list)
    document_chunks: list[Memory] = field(default_factory=list)
    decisions: list[DecisionEntry] = field(default_factory=list)
    recalls: list[dict[str, Any]] = field(default_factory=list)
    disputed_by: Row | None = None  # the turn that put a disputed fact in doubt


def memory_story(*, namespace: Namespace, memory: Memory, recall_limit: int = 20) -> MemoryStory:
    """Everything the detail page shows of one memory: its content and versions (each with
    its word-level changes), the supersede chain both ways, where it came from (the turns
    around its source turn, or its document's chunks), the consolidation decisions that
    touched it and when recall served it (newest `recall_limit`, with its rank)."""
    keys = KeyCache()
    content = open_memory(keys, memory)
    opened = [
        (version, open_version(keys, version, memory.subject_id, memory.namespace_id))
        for version in MemoryVersion.objects.filter(memory=memory).order_by("version")
    ]
    versions: list[VersionEntry] = []
    for i, (version, text) in enumerate(opened):
        before = opened[i - 1][1] if i else None
        changes = word_diff(before, text) if before is not None else []
        versions.append(VersionEntry(version, text, changes))
    versions.reverse()

    # What it replaced: the memories whose superseded_by names it (turns that ended with a
    # fact it replaced among them), and the ones its provenance lists.
    replaced = (
        namespace_memories(namespace).filter(superseded_by=memory).values_list("pk", flat=True)
    )
    linked = list(
        dict.fromkeys(
            [str(value) for value in memory.metadata.get("supersedes", []) or []]
            + [str(pk) for pk in list(replaced)]
        )
    )
    successor_id = str(memory.superseded_by_id) if memory.superseded_by_id else None
    related = {
        str(m.pk): m
        for m in namespace_memories(namespace).filter(
            pk__in=[*uuids_of(linked), *uuids_of([successor_id] if successor_id else [])]
        )
    }
    story = MemoryStory(
        memory=memory,
        content=content,
        versions=versions,
        predecessors=memories_opened([related[i] for i in linked if i in related]),
        successor=(
            memories_opened([related[successor_id]])[0]
            if successor_id and successor_id in related
            else None
        ),
    )
    _provenance(story, namespace, keys)
    if memory.status == Status.DISPUTED:
        turn = _disputing_turns(namespace, [memory]).get(memory.metadata.get("disputed_by", ""))
        story.disputed_by = memories_opened([turn], keys)[0] if turn is not None else None
    story.decisions = _decisions(namespace, memory, keys)
    logs = list(
        RecallLog.objects.filter(
            namespace=namespace, subject=memory.subject_id, memory_ids__contains=[memory.pk]
        ).order_by("-created_at")[:recall_limit]
    )
    judged = dict(
        RecallFeedback.objects.filter(
            namespace=namespace, memory_id=memory.pk, recall__in=[log.pk for log in logs]
        )
        .order_by("updated_at")
        .values_list("recall_id", "relevant")
    )  # the latest judgement of each recall, by anyone
    who = _recalled_by(logs)
    story.recalls = [
        {
            "id": log.pk,
            "relevant": judged.get(log.pk),
            "at": log.created_at,
            "actor_type": log.actor_type,
            "actor_id": log.actor_id,
            "who": who[(log.actor_type, log.actor_id)],
            "purpose": log.purpose,
            "rank": log.memory_ids.index(memory.pk) + 1,
            "of": len(log.memory_ids),
        }
        for log in logs
    ]
    return story


def _recalled_by(logs: list[RecallLog]) -> dict[tuple[str, str], str]:
    """Who recalled, as an actor's `type:name` display: a dashboard user by their username
    and an app by its key's name, rather than by their ids."""
    users = {
        str(pk): name
        for pk, name in get_user_model()
        .objects.filter(
            pk__in=[
                log.actor_id for log in logs if log.actor_type == "user" and log.actor_id.isdigit()
            ]
        )
        .values_list("pk", "username")
    }
    keys = dict(
        ApiKey.objects.filter(
            prefix__in=[log.actor_id for log in logs if log.actor_type == "api_key"]
        ).values_list("prefix", "name")
    )
    names = {"user": users, "api_key": keys}
    return {
        (log.actor_type, log.actor_id): f"{log.actor_type}:"
        + names.get(log.actor_type, {}).get(log.actor_id, log.actor_id)
        for log in logs
    }


def _decisions(namespace: Namespace, memory: Memory, keys: KeyCache) -> list[DecisionEntry]:
    """The consolidation decisions that touched the memory, each with the other memory it
    was about, opened so the page can name it by its content rather than its id."""
    logs = list(
        ConsolidationLog.objects.filter(namespace=namespace, subject=memory.subject_id)
        .filter(Q(memory_id=memory.pk) | Q(related_id=memory.pk))
        .order_by("-created_at")[:50]
    )
    others: dict[ConsolidationLog, uuid.UUID | None] = {}
    seen = set()
    for log in logs:
        said = (log.decision, log.reason, log.memory_id, log.related_id)
        if said in seen:
            continue  # the same decision logged again (a retried job): told once
        seen.add(said)
        ids = [value for value in (log.related_id, log.memory_id) if value and value != memory.pk]
        others[log] = ids[0] if ids else None
    opened = {
        row.memory.pk: row
        for row in memories_opened(
            list(namespace_memories(namespace).filter(pk__in=[i for i in others.values() if i])),
            keys,
        )
    }
    return [
        DecisionEntry(
            log,
            other_id,
            opened.get(other_id) if other_id else None,
            ended_here=log.related_id == memory.pk,
        )
        for log, other_id in others.items()
    ]


def uuids_of(values: list[Any]) -> list[uuid.UUID]:
    out = []
    for value in values:
        try:
            out.append(uuid.UUID(str(value)))
        except ValueError:
            continue
    return out


def _provenance(story: MemoryStory, namespace: Namespace, keys: KeyCache) -> None:
    memory, source = story.memory, story.memory.source or {}
    if source.get("document"):
        # A document's chunks share its subject: the subject's index finds them.
        story.document_chunks = list(
            namespace_memories(namespace)
            .filter(subject=memory.subject_id, source__document=source["document"])
            .exclude(pk=memory.pk)
            .order_by("created_at")[:20]
        )
        return
    found = source_turns(namespace=namespace, memories=[memory], keys=keys, around=2)
    if memory.pk in found:
        story.session, story.turns = found[memory.pk]


def _session_key(memory: Memory) -> str:
    """The session a memory came from, if it came from a conversation of its subject."""
    source = memory.source or {}
    if source.get("document") or memory.subject_id is None:
        return ""
    return str(source.get("session") or memory.session_key or "")


def source_turns(
    *, namespace: Namespace, memories: list[Memory], keys: KeyCache, around: int = 1
) -> dict[uuid.UUID, tuple[Session, list[Turn]]]:
    """Where each memory came from in its conversation, by memory id: its session, and its
    source turn (the message its `source` names, else the memory's own position) with
    `around` turns either side, decrypted, speakers kept. Memories of no stored session
    are left out. Three queries for any number of memories (their sessions, their source
    messages, the turns around them), so a page of them costs what one does."""
    placed = _source_places(namespace, memories)
    if not placed:
        return {}
    near = Q()
    for session, position in placed.values():
        near |= Q(session=session, position__gte=position - around, position__lte=position + around)
    by_session: dict[uuid.UUID, list[Message]] = {}
    for turn in Message.objects.filter(near, namespace=namespace).order_by("position"):
        by_session.setdefault(turn.session_id, []).append(turn)
    keys.preload(namespace.pk, [session.subject_id for session, _ in placed.values()])
    opened: dict[uuid.UUID, str] = {}

    def text(message: Message, subject_id: uuid.UUID) -> str:
        if message.pk not in opened:  # neighbours of two memories are decrypted once
            opened[message.pk] = open_row(keys, message, namespace.pk, subject_id)
        return opened[message.pk]

    return {
        pk: (
            session,
            [
                Turn(m.position, m.role, text(m, session.subject_id), m.position == position)
                for m in by_session.get(session.pk, [])
                if abs(m.position - position) <= around
            ],
        )
        for pk, (session, position) in placed.items()
    }


def _source_places(
    namespace: Namespace, memories: list[Memory]
) -> dict[uuid.UUID, tuple[Session, int]]:
    """Each memory's session and the position of its source turn in it, by memory id (two
    queries): the message its `source` names, else the memory's own position."""
    wanted = {m.pk: m for m in memories if _session_key(m)}
    if not wanted:
        return {}
    which = Q()
    for memory in wanted.values():
        which |= Q(subject_id=memory.subject_id, external_id=_session_key(memory))
    sessions: dict[tuple[Any, str], Session] = {
        (session.subject_id, session.external_id): session
        for session in Session.objects.filter(which, namespace=namespace)
    }
    named = {pk: uuids_of([(m.source or {}).get("message")]) for pk, m in wanted.items()}
    anchors = dict(
        Message.objects.filter(
            namespace=namespace,
            session__in=list(sessions.values()),
            pk__in=[ids[0] for ids in named.values() if ids],
        ).values_list("pk", "position")
    )
    placed: dict[uuid.UUID, tuple[Session, int]] = {}
    for pk, memory in wanted.items():
        session = sessions.get((memory.subject_id, _session_key(memory)))
        position = anchors.get(named[pk][0]) if named[pk] else None
        position = position if position is not None else memory.position
        if session is not None and position is not None:
            placed[pk] = (session, position)
    return placed


# --- The review queue ----------------------------------------------------------------------

REVIEW_SECTION_LIMIT = 50
# The nearest memories each recent one is compared with (the nearest may differ in a value).
DUPLICATE_CANDIDATES = 3
RECENT_SUPERSEDE_DAYS = 7


@dataclass(frozen=True)
class ReviewItem:
    reason: str  # disputed, pending, low_confidence, duplicate, pii, superseded
    row: Row
    other: Row | None = None  # the duplicate's pair; the turn that disputed a fact
    similarity: float | None = None
    turns: list[Turn] = field(default_factory=list)  # its source turn, a turn either side
    history: Timeline | None = None  # a disputed fact's values over time, this one among them


def _unreviewed(memories: QuerySet[Memory]) -> QuerySet[Memory]:
    return memories.exclude(metadata__has_key="reviewed_at")


def _queue_filters(namespaces: list[Namespace], below: Q | None = None) -> dict[str, Q]:
    """What puts a memory in each section of the review queue (near-duplicates aside: they
    are pairs, found by `duplicate_pairs`), each namespace under its own threshold (`below`:
    the low-confidence condition, when given, instead of one built from `namespaces`)."""
    if below is None:
        below = Q()
        for namespace in namespaces:
            below |= Q(namespace=namespace, confidence__lt=namespace.review_threshold)
    unreviewed = ~Q(metadata__has_key="reviewed_at")
    current = Q(valid_to__isnull=True, status=Status.ACTIVE) & unreviewed
    since = timezone.now() - timedelta(days=RECENT_SUPERSEDE_DAYS)
    return {
        "disputed": Q(status=Status.DISPUTED),
        "pending": Q(status=Status.PENDING_REVIEW),
        "low_confidence": current & below,
        "pii": current & Q(tags__overlap=[f"pii:{kind}" for kind in pii.TYPES]),
        # A turn that ended with its fact follows the fact's review (its rollback reopens it).
        "superseded": Q(valid_to__gte=since)
        & ~Q(status=Status.ARCHIVED)
        & ~Q(metadata__has_key=ENDED_WITH)
        & unreviewed,
    }


QUEUE_SECTIONS = ("disputed", "pending", "low_confidence", "duplicate", "pii", "superseded")


def review_counts(*, namespaces: list[Namespace], pairs: int | None = None) -> dict[str, int]:
    """How many items each section of these namespaces' review queues holds, counted as the
    queue's page counts them (near-duplicate pairs up to the page's limit): the overview's
    figure and the queue's own agree. `pairs`: the near-duplicate pairs already found (the
    queue's page has them; finding them compares vectors)."""
    if not namespaces:
        return dict.fromkeys(QUEUE_SECTIONS, 0)
    found = Memory.objects.filter(namespace__in=[n.pk for n in namespaces]).aggregate(
        **{name: Count("id", filter=where) for name, where in _queue_filters(namespaces).items()}
    )
    found["duplicate"] = (
        pairs if pairs is not None else sum(len(duplicate_pairs(namespace=n)) for n in namespaces)
    )
    return {name: found[name] for name in QUEUE_SECTIONS}


def review_sizes_by_namespace() -> dict[str, tuple[int, int]]:
    """Every namespace holding memories, by slug: (how many memories wait in its review
    queue, how many of those are disputed facts). Near-duplicate pairs are left out (finding
    them compares vectors); a memory in several sections counts once. One aggregate query
    over the memories, for the metrics endpoint; unscoped: it returns counts, no content."""
    threshold = Coalesce(F("namespace__review_below"), Value(settings.MEMORYHUB_REVIEW_BELOW))
    where = _queue_filters([], below=Q(confidence__lt=threshold))
    waiting = Q()
    for condition in where.values():
        waiting |= condition
    rows = (
        Memory.objects.order_by()
        .values("namespace__slug")
        .annotate(
            waiting=Count("id", filter=waiting),
            disputed=Count("id", filter=where["disputed"]),
        )
    )
    return {row["namespace__slug"]: (row["waiting"], row["disputed"]) for row in rows}


def review_queue(*, namespace: Namespace) -> dict[str, list[ReviewItem]]:
    """What needs a person, by reason, each newest first and at most REVIEW_SECTION_LIMIT:
    disputed facts, each with the turn that put it in doubt; pending-review memories; current
    ones below the confidence threshold; near-duplicate pairs (same subject, at least the
    model's near-duplicate cosine); PII-tagged ones; facts superseded in the last
    RECENT_SUPERSEDE_DAYS days. Approved memories leave the queue (marked reviewed)."""
    base = namespace_memories(namespace).order_by("-created_at")
    where = _queue_filters([namespace])
    limit = REVIEW_SECTION_LIMIT
    disputed = list(base.filter(where["disputed"]).order_by("-updated_at")[:limit])
    by_message = _disputing_turns(namespace, disputed)
    pending = list(base.filter(where["pending"])[:limit])
    low = list(base.filter(where["low_confidence"])[:limit])
    tagged = list(base.filter(where["pii"])[:limit])
    superseded = list(base.filter(where["superseded"]).order_by("-valid_to")[:limit])
    pairs = duplicate_pairs(namespace=namespace)
    by_id = {
        str(m.pk): m
        for m in namespace_memories(namespace).filter(pk__in=[x for p in pairs for x in p[:2]])
    }
    every = [*disputed, *by_message.values(), *pending, *low, *tagged, *superseded]
    every += list(by_id.values())
    keys = KeyCache()
    opened = {str(r.memory.pk): r for r in memories_opened(every, keys)}
    items = [*disputed, *pending, *low, *tagged, *superseded]
    items += [by_id[a] for a, b, _ in pairs if a in by_id and b in by_id]
    sources = source_turns(namespace=namespace, memories=items, keys=keys)
    histories = _histories(disputed, keys)

    def item(reason: str, memory: Memory, other: Memory | None = None, **more: Any) -> ReviewItem:
        return ReviewItem(
            reason,
            opened[str(memory.pk)],
            opened[str(other.pk)] if other is not None else None,
            turns=sources[memory.pk][1] if memory.pk in sources else [],
            history=histories.get(memory.pk),
            **more,
        )

    def turn(memory: Memory) -> Memory | None:
        return by_message.get(memory.metadata.get("disputed_by") or "")

    return {
        "disputed": [item("disputed", m, turn(m)) for m in disputed],
        "pending": [item("pending", m) for m in pending],
        "low_confidence": [item("low_confidence", m) for m in low],
        "duplicate": [
            item("duplicate", by_id[a], by_id[b], similarity=similarity)
            for a, b, similarity in pairs
            if a in by_id and b in by_id
        ],
        "pii": [item("pii", m) for m in tagged],
        "superseded": [item("superseded", m) for m in superseded],
    }


def _histories(disputed: list[Memory], keys: KeyCache) -> dict[uuid.UUID, Timeline]:
    """Each disputed fact's timeline (the subject page's, `fact_timelines`), by fact: read
    for all their subjects at once, only the timelines that hold one of them decrypted."""
    wanted = {m.pk for m in disputed if m.subject is not None}
    subjects = list({m.subject_id: m.subject for m in disputed if m.subject is not None}.values())
    found: dict[uuid.UUID, Timeline] = {}
    for timelines in fact_timelines_of(subjects=subjects, keys=keys, holding=wanted).values():
        for timeline in timelines:
            found |= {
                step.memory.pk: timeline for step in timeline.steps if step.memory.pk in wanted
            }
    return found


def _disputing_turns(namespace: Namespace, disputed: list[Memory]) -> dict[str, Memory]:
    """The conversation turns (episodic memories) that disputed these facts, by message."""
    messages = {m.metadata.get("disputed_by") for m in disputed} - {None, ""}
    if not messages:
        return {}
    turns = namespace_memories(namespace).filter(
        kind=Kind.EPISODIC, source__message__in=sorted(messages)
    )
    return {str(turn.source.get("message")): turn for turn in turns}


def duplicate_pairs(
    *,
    namespace: Namespace,
    limit: int = REVIEW_SECTION_LIMIT,
    scan: int = 200,
    neighbours: int = 2000,
) -> list[tuple[str, str, float]]:
    """Near-duplicate pairs among the newest `scan` current semantic memories: each with the
    nearest current memories of the same subject (among that subject's newest `neighbours`,
    compared exactly: the work stays bounded for a subject with many memories) at least the
    model's near-duplicate cosine alike (`vector_spaces.*_DUPLICATE`; each pair in
    the space of the model that reads both) that state the same fact (`says_no_more`, one
    way or the other, within the same slot): never two facts with different values, however
    alike their vectors (an English-only model puts every Chinese sentence close to every
    other).
    The newer of a pair comes first; each pair once."""
    table = Memory._meta.db_table
    spaces = vector_spaces.serving()
    similarity, same_models, threshold = _pair_similarity(spaces)
    sql = f"""
        WITH recent AS (
            SELECT id, subject_id, embedding, embedding_model, multilingual_embedding,
                   multilingual_model, latin_script, token_index,
                   metadata ->> 'slot' AS slot, created_at
            FROM {table}
            WHERE namespace_id = %(ns)s AND status = 'active' AND valid_to IS NULL
              AND kind = %(kind)s AND subject_id IS NOT NULL
              AND NOT metadata ? 'reviewed_at'
            ORDER BY created_at DESC LIMIT %(scan)s
        )
        SELECT r.id, n.id, n.similarity, r.token_index, r.slot, n.token_index, n.slot
        FROM recent r
        CROSS JOIN LATERAL (
            SELECT s.id, {similarity} AS similarity, {threshold} AS threshold,
                   s.token_index, s.slot
            FROM (
                SELECT m.id, m.embedding, m.multilingual_embedding, m.latin_script,
                       m.token_index, m.metadata ->> 'slot' AS slot
                FROM {table} m
                WHERE m.namespace_id = %(ns)s AND m.subject_id = r.subject_id AND m.id <> r.id
                  AND m.status = 'active' AND m.valid_to IS NULL AND m.kind = %(kind)s
                  AND {same_models}
                ORDER BY m.created_at DESC LIMIT %(neighbours)s
            ) s
            ORDER BY ({similarity}) - ({threshold}) DESC LIMIT %(nearest)s
        ) n
        WHERE n.similarity >= n.threshold
        ORDER BY r.created_at DESC, n.similarity DESC
    """  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "ns": namespace.pk,
                "kind": Kind.SEMANTIC.value,
                "scan": scan,
                "neighbours": neighbours,
                "nearest": DUPLICATE_CANDIDATES,
                "model": spaces.primary,
                "multilingual_model": spaces.multilingual,
                "primary_threshold": vector_spaces.PRIMARY_DUPLICATE[0],
                "multilingual_threshold": vector_spaces.MULTILINGUAL_DUPLICATE[0],
            },
        )
        found = cursor.fetchall()
    return _same_facts(found, limit)


def _same_facts(found: list[tuple[Any, ...]], limit: int) -> list[tuple[str, str, float]]:
    """The candidate pairs that state the same fact (in the same slot), each recent memory
    with its nearest such twin only, each pair once, at most `limit`."""
    pairs: list[tuple[str, str, float]] = []
    seen: set[frozenset[str]] = set()
    paired: set[str] = set()  # recent memories given their nearest same fact already
    for a, b, similarity, a_tokens, a_slot, b_tokens, b_slot in found:
        key = frozenset((str(a), str(b)))
        if str(a) in paired or key in seen or (a_slot or "") != (b_slot or ""):
            continue
        slot = a_slot or ""
        if not (
            says_no_more(a_tokens or [], b_tokens or [], slot=slot)
            or says_no_more(b_tokens or [], a_tokens or [], slot=slot)
        ):
            continue
        seen.add(key)
        paired.add(str(a))
        pairs.append((str(a), str(b), round(float(similarity), 3)))
        if len(pairs) >= limit:
            break
    return pairs


def _pair_similarity(spaces: vector_spaces.Spaces) -> tuple[str, str, str]:
    """SQL for a pair's similarity (of a recent memory r and another s), the condition that
    both hold vectors of the model(s) compared, and the pair's near-duplicate threshold: by
    the rule recall follows (vector_spaces), each pair in one model's space."""
    primary = "1 - (s.embedding <=> r.embedding)"
    multilingual = "1 - (s.multilingual_embedding <=> r.multilingual_embedding)"
    primary_models = (
        "m.embedding IS NOT NULL AND m.embedding_model = %(model)s"
        " AND r.embedding_model = %(model)s"
    )
    multilingual_models = (
        "m.multilingual_embedding IS NOT NULL AND m.multilingual_model = %(multilingual_model)s"
        " AND r.multilingual_model = %(multilingual_model)s"
    )
    if spaces.mode == "primary":
        return primary, primary_models, "%(primary_threshold)s::float8"
    if spaces.mode == "multilingual":
        return multilingual, multilingual_models, "%(multilingual_threshold)s::float8"
    latin = "r.latin_script AND s.latin_script"
    return (
        f"CASE WHEN {latin} THEN {primary} ELSE {multilingual} END",
        f"{primary_models} AND {multilingual_models}",
        f"CASE WHEN {latin} THEN %(primary_threshold)s::float8"
        " ELSE %(multilingual_threshold)s::float8 END",
    )


# --- A purge's dry run ---------------------------------------------------------------------


@dataclass(frozen=True)
class PurgePlan:
    count: int
    subjects: list[tuple[str, int]]  # (external id, memories), most first, at most 20
    subject_count: int
    sample: list[Row]
    versions: int
    recall_log_rows: int


def purge_plan(*, namespace: Namespace, memories: QuerySet[Memory]) -> PurgePlan:
    """What purging `memories` (scoped to the namespace) would delete: how many memories,
    of which subjects, a sample of ten (decrypted), their versions, and the recall-log rows
    that name them."""
    scoped = memories.filter(namespace=namespace)
    count = scoped.count()
    by_subject = (
        scoped.exclude(subject=None)
        .values("subject__external_id")
        .annotate(n=Count("id"))
        .order_by("-n", "subject__external_id")
    )
    subject_count = scoped.exclude(subject=None).values("subject").distinct().count()
    versions = MemoryVersion.objects.filter(memory__in=scoped.values("id")).count()
    ids_sql, ids_params = scoped.values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {RecallLog._meta.db_table} WHERE namespace_id = %s"  # noqa: S608
            f" AND memory_ids && ARRAY({ids_sql})",
            [namespace.pk, *ids_params],
        )
        recall_rows = cursor.fetchone()[0]
    return PurgePlan(
        count=count,
        subjects=[(row["subject__external_id"], row["n"]) for row in by_subject[:20]],
        subject_count=subject_count,
        sample=memories_opened(list(scoped.order_by("-created_at")[:10])),
        versions=versions,
        recall_log_rows=recall_rows,
    )


# --- Subjects ------------------------------------------------------------------------------


def subject_list(*, namespace: Namespace, search: str = "") -> QuerySet[Subject]:
    """The namespace's subjects with their current memory counts (as the subject's page
    counts them: neither superseded nor archived) and last activity, newest activity first;
    `search` matches the start of the external id."""
    subjects = Subject.objects.filter(namespace=namespace)
    if search:
        subjects = subjects.filter(external_id__startswith=search)
    return subjects.annotate(
        memory_count=Count(
            "memories",
            filter=Q(memories__valid_to__isnull=True) & ~Q(memories__status=Status.ARCHIVED),
        ),
        last_activity=Max("memories__created_at"),
    ).order_by("-last_activity", "external_id")


def subject_by_id(*, namespace: Namespace, subject_id: str) -> Subject | None:
    found = uuids_of([subject_id])
    if not found:
        return None
    subject = Subject.objects.filter(namespace=namespace, pk=found[0]).first()
    if subject is not None:
        subject.namespace = namespace
    return subject


@dataclass(frozen=True)
class SessionView:
    session: Session
    turns: list[Turn]
    summary: str | None
    summary_through: int | None


def subject_overview(
    *, subject: Subject, sessions: int = 10, turns: int = 50
) -> tuple[list[tuple[str, str, int]], list[SessionView]]:
    """A subject's memory counts by kind (current ones: kind, its label, count), and its
    newest `sessions` sessions,
    each with its last `turns` turns and newest summary, decrypted."""
    counts = dict(
        Memory.objects.filter(subject=subject, valid_to__isnull=True)
        .exclude(status=Status.ARCHIVED)
        .values_list("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )
    keys = KeyCache()
    views = []
    for session in Session.objects.filter(subject=subject).order_by("-updated_at")[:sessions]:
        messages = list(Message.objects.filter(session=session).order_by("-position")[:turns])
        messages.reverse()
        summary = SessionSummary.objects.filter(session=session).order_by("-version").first()
        views.append(
            SessionView(
                session=session,
                turns=[
                    Turn(
                        m.position,
                        m.role,
                        open_row(keys, m, subject.namespace_id, subject.pk),
                        False,
                    )
                    for m in messages
                ],
                summary=open_row(keys, summary, subject.namespace_id, subject.pk)
                if summary
                else None,
                summary_through=summary.through_position if summary else None,
            )
        )
    return [(kind.value, str(kind.label), counts.get(kind.value, 0)) for kind in Kind], views


def purge_job_get(*, namespace: Namespace, job_id: str) -> Job | None:
    """A purge job of the namespace (None for another namespace's, or none)."""
    found = uuids_of([job_id])
    if not found:
        return None
    return Job.objects.filter(namespace=namespace, kind="purge", pk=found[0]).first()
