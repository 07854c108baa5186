"""Consolidation: each extracted fact is added, merged into a near-duplicate, a no-op, or
supersedes the fact of its slot (kept as history); a negation or a change ends the current
facts it names (kept as history too); a fact less certain than the namespace's review
threshold waits in the review queue instead. Every decision goes to the log."""

from __future__ import annotations

import hashlib
import hmac
import logging
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.facts.doubt import Dispute
from apps.facts.rules import Ending, slot_group, speaks_of, substitute
from apps.memories import vector_spaces
from apps.memories.embeddings import get_provider
from apps.memories.fields import vector_literal
from apps.memories.keyword_index import index_terms
from apps.memories.models import SEARCH_FIELDS, Kind, Memory, Status, Subject, VectorColumn
from apps.memories.multilingual import get_multilingual_provider, is_latin_script
from apps.memories.row_encryption import KeyCache, open_memory, open_row
from apps.memories.services import (
    NewMemory,
    memories_insert,
    memory_update,
    screen_content,
)
from apps.namespaces.models import Namespace
from apps.pipeline import extraction
from apps.pipeline.models import (
    ConsolidationLog,
    Decision,
    Job,
    Message,
    Session,
)
from memoryhub.exceptions import ApplicationError

logger = logging.getLogger(__name__)

# With a model's near-duplicate cosine (vector_spaces.*_DUPLICATE), this share of
# the tokens: the same fact, said again.
DUPLICATE_OVERLAP = 0.6
NEAR_FACTS = 5  # the nearest current facts of the same kind that a new one is compared with
KEPT_CORRECTION = gettext_noop("kept the subject's correction, newer than this turn")


REPLAY_LOOKBACK = 2000  # earlier turns of a session compared with a batch's new ones


def replayed_turn_times(
    *, keys: KeyCache, subject: Subject, session: Session, turns: list[extraction.Turn]
) -> dict[int, datetime]:
    """For the turns of a batch that repeat an earlier turn of the same session word for
    word (an app that sends the whole conversation again), the time of that first saying,
    by position: a correction the subject made since then stands over them. Only looked up
    when the subject has corrected something (privacy portal)."""
    if (
        not turns
        or not Memory.objects.filter(
            namespace_id=subject.namespace_id, subject=subject, metadata__has_key="corrected_at"
        ).exists()
    ):
        return {}
    first = min(turn.position for turn in turns)
    earlier: dict[tuple[str, str], datetime] = {}
    rows = Message.objects.filter(session=session, position__lt=first).order_by("-position")
    for row in rows[:REPLAY_LOOKBACK]:
        said = " ".join(open_row(keys, row, subject.namespace_id, subject.pk).split())
        earlier[(row.role, said)] = row.created_at  # the earliest wins: newest first
    replayed = {}
    for turn in turns:
        when = earlier.get((turn.role, " ".join(turn.content.split())))
        if when is not None:
            replayed[turn.position] = when
    return replayed


def _corrected_since(corrected_at: str | None, when: datetime | None) -> bool:
    """Whether a memory's subject corrected it (privacy portal) at or after `when`, the time
    of the turn a new value comes from: then the correction stands."""
    if not corrected_at:
        return False
    moment = parse_datetime(corrected_at)
    return moment is not None and (when is None or moment >= when)


def slot_hash(keys: KeyCache, namespace_id: int, slot: str) -> str:
    """A keyed hash of a fact's slot ("favourite colour"): comparable, not readable."""
    key = keys.index_key(namespace_id)
    return hmac.new(key, f"slot:{slot}".encode(), hashlib.sha256).hexdigest()[:32]


def says_no_more(tokens: Collection[int], than: Collection[int], *, slot: str) -> bool:
    """Whether a fact of `tokens` says nothing that a fact of `than` does not, so the two are
    one fact: within a slot only the same words are ("用户喜欢香菜" is not "用户不喜欢吃香菜",
    "住在深圳" not "住在上海"); elsewhere, saying less is saying it again. Two facts that each
    hold a word the other lacks differ in some value, however alike their vectors."""
    mine, theirs = set(tokens), set(than)
    return mine == theirs or (not slot and mine <= theirs)


def _token_overlap(a: list[int], b: list[int]) -> float:
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def consolidate_and_store(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    session: Session,
    candidates: list[extraction.Candidate],
    tags_by_message: dict[str, list[str]],
    message_by_position: dict[int, str],
    keys: KeyCache,
    job: Job | None = None,
    said_at: dict[int, datetime] | None = None,
) -> dict[str, Any]:
    """Store episodic candidates as turns of the session; decide add / no-op / merge /
    supersede for each semantic one against the subject's current facts. Every decision is
    logged with its reason.

    A fact its subject corrected in the privacy portal is never replaced, merged into or
    ended by what a turn said before the correction (`said_at`: each turn's time by
    position, a replayed turn's being its first saying (`replayed_turn_times`); without it,
    now): the correction stands over the older extracted value."""
    decisions: dict[str, int] = {}
    memory_ids: list[str] = []
    logs: list[ConsolidationLog] = []
    index_key = keys.index_key(namespace.pk)

    def log(
        decision: str, reason: str, memory_id: Any, related: Any = None, sim: float | None = None
    ) -> None:
        decisions[decision] = decisions.get(decision, 0) + 1
        logs.append(
            ConsolidationLog(
                namespace=namespace,
                subject=subject,
                job=job,
                decision=decision,
                reason=reason,
                memory_id=memory_id,
                related_id=related,
                similarity=sim,
            )
        )

    def source(candidate: extraction.Candidate) -> dict[str, Any]:
        message = message_by_position.get(candidate.position)
        return {"session": session.external_id, "message": message, "extractor": candidate.category}

    episodic = [c for c in candidates if c.kind == Kind.EPISODIC]
    semantic = [c for c in candidates if c.kind != Kind.EPISODIC]
    items = [
        NewMemory(
            content=c.content,
            subject_external_id=subject.external_id,
            kind=Kind.EPISODIC,
            importance=c.importance,
            confidence=c.confidence,
            tags=sorted(
                set(c.tags) | set(tags_by_message.get(message_by_position.get(c.position, ""), []))
            ),
            source=source(c),
            session_key=session.external_id,
            position=c.position,
            occurred_at=c.occurred_at,
            metadata={"speaker": c.speaker} if c.speaker else {},
        )
        for c in episodic
    ]
    if items:
        for memory in memories_insert(actor=actor, namespace=namespace, items=items, keys=keys):
            memory_ids.append(str(memory.id))
            log(Decision.ADD, gettext_noop("conversation turn"), memory.id)

    # Extracted facts are new text (an LLM may write out what the turn only hinted at): the
    # PII policy screens them before they are embedded or stored.
    screened: list[extraction.Candidate] = []
    for candidate in semantic:
        try:
            result = screen_content(namespace, candidate.content)
        except ApplicationError:
            log(Decision.REJECT, gettext_noop("the PII policy rejects the extracted fact"), None)
            continue
        candidate.content = result.text
        candidate.tags = sorted(set(candidate.tags) | set(result.tags))
        screened.append(candidate)
    semantic = sorted(screened, key=lambda c: c.position)
    stated = [c for c in semantic if c.content]
    vectors = dict(
        zip(
            map(id, stated),
            get_provider().embed_documents([c.content for c in stated]) if stated else [],
            strict=True,
        )
    )
    spaces = vector_spaces.serving()
    nears = _comparisons(spaces, stated, vectors)
    pending: list[_Pending] = []
    review_below = namespace.review_threshold
    texts: dict[Any, str] = {}

    def opened(memory: Memory) -> str:
        """A current fact's statement, decrypted once for the whole batch."""
        if memory.pk not in texts:
            texts[memory.pk] = open_memory(keys, memory)
        return texts[memory.pk]

    for candidate in semantic:
        certain = candidate.confidence >= review_below
        when = (said_at or {}).get(candidate.position) or timezone.now()
        if certain and candidate.ends:
            _end_facts(
                by_message=source(candidate).get("message"),
                actor=actor,
                namespace=namespace,
                subject=subject,
                endings=candidate.ends,
                keys=keys,
                pending=pending,
                log=log,
                opened=opened,
                when=when,
            )
        if certain and candidate.replace is not None:
            _correct_facts(
                actor=actor,
                namespace=namespace,
                subject=subject,
                replace=candidate.replace,
                keys=keys,
                pending=pending,
                source=source(candidate),
                opened=opened,
                when=when,
            )
        if candidate.disputes:
            _dispute_facts(
                actor=actor,
                namespace=namespace,
                subject=subject,
                session=session,
                disputes=candidate.disputes,
                keys=keys,
                pending=pending,
                log=log,
                opened=opened,
                when=when,
                by_message=source(candidate).get("message"),
                earlier=[
                    m for p, m in sorted(message_by_position.items()) if p < candidate.position
                ],
            )
        if not candidate.content:
            continue
        tags = sorted(
            set(candidate.tags)
            | set(tags_by_message.get(message_by_position.get(candidate.position, ""), []))
        )
        _consolidate_one(
            actor=actor,
            namespace=namespace,
            subject=subject,
            candidate=candidate,
            vector=vectors[id(candidate)],
            near=nears[id(candidate)],
            tags=tags,
            source=source(candidate),
            keys=keys,
            index_key=index_key,
            memory_ids=memory_ids,
            log=log,
            pending=pending,
            review=not certain,
            when=when,
        )
    _store_pending(actor, namespace, subject, pending, keys, memory_ids, log)
    ConsolidationLog.objects.bulk_create(logs)
    return {"memories": memory_ids, "decisions": decisions}


def _consolidate_one(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    candidate: extraction.Candidate,
    vector: np.ndarray,
    near: _Near,
    tags: list[str],
    source: dict[str, Any],
    keys: KeyCache,
    index_key: bytes,
    memory_ids: list[str],
    log: Any,
    pending: list[_Pending],
    review: bool = False,
    when: datetime | None = None,
) -> None:
    """Decide for one new fact: no-op or merge now; add (possibly superseding) later, with
    the rest of the batch, in `pending`. A fact `review` waits for a person instead: stored
    pending review, superseding nothing."""
    slot = slot_hash(keys, namespace.pk, candidate.slot) if candidate.slot else ""
    group = slot_hash(keys, namespace.pk, slot_group(candidate.slot)) if candidate.slot else ""
    person = candidate.slot.rpartition("|")[0]
    tokens = index_terms(candidate.content, index_key)
    current = Memory.objects.filter(
        namespace=namespace,
        subject=subject,
        kind=candidate.kind,
        status=Status.ACTIVE,
        valid_to__isnull=True,
    )
    # The nearest current facts of the same kind by meaning, similarity computed by the
    # database: through the HNSW index, then by comparing every vector should the walk come
    # back with fewer than it asked for (few such facts, or a graph crowded with deleted
    # rows that left the subject's own unreached: a duplicate would then be stored).
    # Compared in one model's space (`_comparisons`): another model's vectors live in
    # another space, and a fact they hold is not near this one by any distance to it.
    column = vector_spaces.VECTOR_FIELD[near.column]
    model_column = vector_spaces.MODEL_FIELD[near.column]
    distance = f"{column} <=> %(vector)s::vector"
    latin = "AND latin_script" if near.latin_only else ""
    with connection.cursor() as cursor:
        for exact in (False, True):
            order = f"({distance}) + 0" if exact else distance  # "+ 0": no index serves it
            cursor.execute(
                f"""
                SELECT id, 1 - ({distance}), token_index, metadata ->> 'slot',
                       metadata ->> 'corrected_at'
                FROM {Memory._meta.db_table}
                WHERE namespace_id = %(namespace)s AND subject_id = %(subject)s
                  AND kind = %(kind)s AND status = %(active)s AND valid_to IS NULL
                  AND {column} IS NOT NULL AND {model_column} = %(model)s {latin}
                ORDER BY {order} LIMIT %(limit)s
                """,  # noqa: S608 (only the table's name and fixed fragments are interpolated)
                {
                    "vector": vector_literal(near.vector),
                    "model": near.model,
                    "namespace": namespace.pk,
                    "subject": subject.pk,
                    "kind": candidate.kind,
                    "active": Status.ACTIVE.value,
                    "limit": NEAR_FACTS,
                },
            )
            # Iterative index scans (settings.HNSW_SEARCH_OPTIONS) return rows in relaxed order.
            nearest = sorted(cursor.fetchall(), key=lambda row: -row[1])
            if len(nearest) >= NEAR_FACTS:
                break
    for memory_id, similarity, token_index, near_slot, corrected_at in nearest:
        overlap = _token_overlap(tokens, token_index)
        if not (
            similarity >= near.same
            or (similarity >= near.duplicate and overlap >= DUPLICATE_OVERLAP)
        ):
            continue
        if (slot or near_slot) and slot != (near_slot or ""):
            continue  # about different things ("home city" vs "work city"), however alike
        if says_no_more(tokens, token_index, slot=slot):
            log(
                Decision.NOOP,
                gettext_noop("near-duplicate of a current fact"),
                memory_id,
                memory_id,
                similarity,
            )
            return
        if _corrected_since(corrected_at, when):
            log(Decision.NOOP, KEPT_CORRECTION, memory_id, memory_id, similarity)
            return
        if slot or review:
            break  # a new value for the same slot ("12 Baker St" -> "14 Baker St"): supersede
        # The new statement says more: the existing memory takes it as a new version.
        memory = current.get(pk=memory_id)
        memory_update(
            actor=actor,
            memory=memory,
            content=candidate.content,
            reason=gettext_noop("merged a more detailed restatement"),
            keys=keys,
            confidence=max(memory.confidence, candidate.confidence),
            importance=max(memory.importance, candidate.importance),
        )
        memory_ids.append(str(memory_id))
        log(
            Decision.MERGE,
            gettext_noop("restated with more detail"),
            memory_id,
            memory_id,
            similarity,
        )
        return
    for other in pending:  # facts of this same batch, not stored yet
        if other.ended or ((slot or other.slot) and slot != other.slot):
            continue
        if other.column != near.column:
            continue  # vectors of two models: not comparable
        similarity = float(near.vector @ other.vector)
        overlap = _token_overlap(tokens, other.tokens)
        if (
            similarity >= near.same
            or (similarity >= near.duplicate and overlap >= DUPLICATE_OVERLAP)
        ) and set(tokens) <= set(other.tokens):
            log(
                Decision.NOOP,
                "near-duplicate of a fact in the same batch",
                other.item.id,
                other.item.id,
                similarity,
            )
            return
    slotted = (
        list(current.filter(metadata__slot=slot).values_list("id", "metadata__corrected_at"))
        if slot and not review
        else []
    )
    for memory_id, corrected_at in slotted:
        if _corrected_since(corrected_at, when):
            log(Decision.NOOP, KEPT_CORRECTION, memory_id, memory_id)
            return
    previous: list[uuid.UUID | None] = [memory_id for memory_id, _ in slotted]
    previous += [
        other.item.id
        for other in pending
        if slot and not review and other.slot == slot and not other.ended and not other.review
    ]
    metadata: dict[str, Any] = {"slot": slot, "group": group} if slot else {}
    if person:
        metadata["person"] = slot_hash(keys, namespace.pk, f"person:{person}")
    if previous:
        metadata["supersedes"] = [str(i) for i in previous]
    pending.append(
        _Pending(
            item=NewMemory(
                id=uuid.uuid4(),
                content=candidate.content,
                subject_external_id=subject.external_id,
                kind=candidate.kind,
                importance=candidate.importance,
                confidence=candidate.confidence,
                tags=tags,
                metadata=metadata,
                source=source,
                embedding=vector,
                multilingual_embedding=(
                    near.vector if near.column == VectorColumn.MULTILINGUAL else None
                ),
                occurred_at=candidate.occurred_at,
                valid_from=candidate.valid_from,
                expires_at=candidate.expires_at,
                status=Status.PENDING_REVIEW if review else Status.ACTIVE,
            ),
            vector=near.vector,
            column=near.column,
            tokens=tokens,
            slot=slot,
            group=group,
            supersedes=previous,
            review=review,
        )
    )


def _correct_facts(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    replace: tuple[str, str],
    keys: KeyCache,
    pending: list[_Pending],
    source: dict[str, Any],
    opened: Callable[[Memory], str],
    when: datetime | None = None,
) -> None:
    """A corrected value ("it's Joan, not Jon"): each current fact that speaks of the old
    value is said again with the new one, in the same slot, superseding it (history kept);
    a fact of this same batch is corrected before it is stored."""
    old, new = replace
    batch = [p for p in pending if not p.ended and not p.review and speaks_of(p.item.content, old)]
    for other in batch:
        other.item.content = substitute(other.item.content, old, new)
    current = _open_facts(namespace, subject, Status.ACTIVE).order_by("created_at")[:500]
    index_key = keys.index_key(namespace.pk)
    corrections = []
    for memory in current:
        if _corrected_since(memory.metadata.get("corrected_at"), when):
            continue  # the subject's own correction is newer than this turn
        statement = opened(memory)
        corrected = substitute(statement, old, new) if speaks_of(statement, old) else statement
        if corrected != statement:
            corrections.append((memory, corrected))
    texts = [o.item.content for o in batch] + [corrected for _, corrected in corrections]
    vectors = list(get_provider().embed_documents(texts)) if texts else []  # one call
    for other, vector in zip(batch, vectors, strict=False):
        other.item.embedding = other.vector = vector
    for (memory, corrected), vector in zip(corrections, vectors[len(batch) :], strict=True):
        slot = memory.metadata.get("slot", "")
        metadata = {k: v for k, v in memory.metadata.items() if k in ("slot", "group", "person")}
        metadata["supersedes"] = [str(memory.id)]
        pending.append(
            _Pending(
                item=NewMemory(
                    id=uuid.uuid4(),
                    content=corrected,
                    subject_external_id=subject.external_id,
                    kind=Kind.SEMANTIC,
                    importance=memory.importance,
                    confidence=max(memory.confidence, 0.9),
                    tags=list(memory.tags),
                    metadata=metadata,
                    source={**source, "corrects": str(memory.id)},
                    embedding=vector,
                    occurred_at=memory.occurred_at,
                    expires_at=memory.expires_at,
                ),
                vector=vector,
                tokens=index_terms(corrected, index_key),
                slot=slot,
                group=memory.metadata.get("group", ""),
                supersedes=[memory.id],
            )
        )


def _end_facts(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    endings: list[Ending],
    keys: KeyCache,
    pending: list[_Pending],
    log: Any,
    opened: Callable[[Memory], str],
    when: datetime | None = None,
    by_message: str | None = None,
) -> None:
    """End the current facts a negation or a change names (history kept: valid_to is set,
    nothing is deleted): those of a slot, or of a slot's kind, or any of the user's own,
    narrowed to those that speak of the ending's value. Facts of this same batch still
    waiting to be stored are ended the same way."""
    now = timezone.now()
    for ending in endings:
        # Facts waiting for a person end too: a hedged "I think I'm allergic to penicillin"
        # pending review, or one in dispute, is answered by "I'm not allergic to penicillin".
        current = _open_facts(
            namespace, subject, Status.ACTIVE, Status.PENDING_REVIEW, Status.DISPUTED
        )
        slot = slot_hash(keys, namespace.pk, ending.slot) if ending.slot else ""
        group = slot_hash(keys, namespace.pk, ending.group) if ending.group else ""
        if slot:
            current = current.filter(metadata__slot=slot)
        elif group:
            current = current.filter(metadata__group=group)
        else:  # any of the user's own facts (never another person's)
            current = current.exclude(metadata__has_key="person")
        for memory in current.order_by("created_at")[:500]:
            if ending.value and not speaks_of(opened(memory), ending.value):
                continue
            if _corrected_since(memory.metadata.get("corrected_at"), when):
                log(Decision.NOOP, KEPT_CORRECTION, None, memory.id)
                continue
            _close(actor, namespace, memory, now, successor=None, by_message=by_message)
            log(
                Decision.SUPERSEDE,
                gettext_noop("ended by a later negation or change"),
                None,
                memory.id,
            )
        for other in pending:
            if other.ended or other.review:
                continue
            if (slot and other.slot != slot) or (group and other.group != group):
                continue
            if not (slot or group) and "person" in other.item.metadata:
                continue
            if ending.value and not speaks_of(other.item.content, ending.value):
                continue
            other.ended = True


def _open_facts(namespace: Namespace, subject: Subject, *statuses: Status) -> QuerySet[Memory]:
    """The subject's facts not ended (valid_to unset) in one of `statuses`, read without
    their vectors and token arrays."""
    return Memory.objects.filter(
        namespace=namespace,
        subject=subject,
        kind=Kind.SEMANTIC,
        status__in=list(statuses),
        valid_to__isnull=True,
    ).defer(*SEARCH_FIELDS)


def _current_facts(namespace: Namespace, subject: Subject) -> QuerySet[Memory]:
    """The facts a turn may dispute: current ones, and those already waiting for a person
    (a hedged fact pending review): either way, the reviewer sees the disputing turn."""
    return _open_facts(namespace, subject, Status.ACTIVE, Status.PENDING_REVIEW)


def _dispute_facts(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    session: Session,
    disputes: list[Dispute],
    keys: KeyCache,
    pending: list[_Pending],
    log: Any,
    opened: Callable[[Memory], str],
    when: datetime | None,
    by_message: str | None,
    earlier: list[str],
) -> None:
    """Put in doubt the current facts a turn disputes (`apps.facts.doubt`): each becomes
    disputed, out of the current facts (history kept) and in the review queue beside the
    turn `by_message`, until a person confirms, corrects or ends it. A fact of the same
    batch still waiting to be stored waits for a person instead (pending review)."""
    for dispute in disputes:
        if dispute.last_said:
            targets = _last_said(namespace, subject, session, pending, earlier)
        else:  # a group's facts, or (no group: an LLM's) any of the user's own
            group = slot_hash(keys, namespace.pk, dispute.group) if dispute.group else ""
            for other in pending:
                if other.ended or (group and other.group != group):
                    continue
                if not group and "person" in other.item.metadata:
                    continue
                if not dispute.value or speaks_of(other.item.content, dispute.value):
                    other.review = True
            facts = _current_facts(namespace, subject)
            facts = (
                facts.filter(metadata__group=group)
                if group
                else facts.exclude(metadata__has_key="person")
            )
            targets = [
                memory
                for memory in facts.order_by("created_at")[:500]
                if not dispute.value or speaks_of(opened(memory), dispute.value)
            ]
        for memory in targets:
            if _corrected_since(memory.metadata.get("corrected_at"), when):
                log(Decision.NOOP, KEPT_CORRECTION, None, memory.id)
                continue
            _dispute(actor, namespace, memory, by_message=by_message)
            log(
                Decision.DISPUTE,
                gettext_noop("put in doubt by a later turn; sent to review"),
                None,
                memory.id,
            )


def _last_said(
    namespace: Namespace,
    subject: Subject,
    session: Session,
    pending: list[_Pending],
    earlier: list[str],
) -> list[Memory]:
    """The facts of the speaker's previous statement ("that's my brother, not me"): those
    of the batch's latest earlier turn that gave any (they wait for a person: pending
    review), else the current facts of the session's latest turn that gave any."""
    for message in reversed(earlier):
        said = [p for p in pending if (p.item.source or {}).get("message") == message]
        if said:
            for other in said:
                other.review = True
            return []
    latest = (
        _current_facts(namespace, subject)
        .filter(source__session=session.external_id)
        .order_by("-created_at")
        .values_list("source__message", flat=True)
        .first()
    )
    if not latest:
        return []
    return list(_current_facts(namespace, subject).filter(source__message=latest)[:50])


def _dispute(actor: Actor, namespace: Namespace, memory: Memory, *, by_message: str | None) -> None:
    """A current fact put in doubt: disputed, `disputed_by` the turn's message. Audited."""
    now = timezone.now()
    memory.status = Status.DISPUTED
    memory.metadata = {
        **memory.metadata,
        "disputed_by": by_message or "",
        "disputed_at": now.isoformat(),
    }
    memory.metadata.pop("reviewed_at", None)
    memory.updated_at = now
    memory.save(update_fields=["status", "metadata", "updated_at"])
    audit_record(
        actor=actor,
        action="memory.dispute",
        namespace=namespace,
        subject_id=memory.subject_id,
        object_type="memory",
        object_id=str(memory.id),
        details={"by_message": by_message},
    )


@dataclass
class _Pending:
    item: NewMemory
    vector: np.ndarray  # compared with the batch's other new facts of the same `column`
    tokens: list[int]
    slot: str
    supersedes: list[Any]
    group: str = ""
    review: bool = False
    ended: bool = False  # negated by a later turn of the same batch: stored as history
    column: VectorColumn = VectorColumn.PRIMARY


@dataclass(frozen=True)
class _Near:
    """How a new fact meets the current ones: the vector column, model and vector, and the
    near-duplicate cosines of that model; `latin_only`: only Latin-script facts (the others
    meet a Latin-script fact through the multilingual model)."""

    column: VectorColumn
    model: str
    vector: np.ndarray
    duplicate: float
    same: float
    latin_only: bool = False


def _comparisons(
    spaces: vector_spaces.Spaces,
    stated: list[extraction.Candidate],
    vectors: dict[int, np.ndarray],
) -> dict[int, _Near]:
    """Each stated fact's `_Near`, by the rule recall follows (vector_spaces): the primary
    model for Latin-script text where it serves, else the multilingual one (one batched call
    for those)."""
    routed = spaces.mode == "routed"
    provider = get_multilingual_provider()
    others = [
        c
        for c in stated
        if provider is not None
        and spaces.mode != "primary"
        and not (routed and is_latin_script(c.content))
    ]
    multilingual = (
        list(provider.embed_documents([c.content for c in others]))
        if others and provider is not None
        else []
    )
    nears = {
        id(c): _Near(
            VectorColumn.MULTILINGUAL,
            spaces.multilingual,
            vector,
            *vector_spaces.MULTILINGUAL_DUPLICATE,
        )
        for c, vector in zip(others, multilingual, strict=True)
    }
    for c in stated:
        if id(c) not in nears:
            nears[id(c)] = _Near(
                VectorColumn.PRIMARY,
                spaces.primary,
                vectors[id(c)],
                *vector_spaces.PRIMARY_DUPLICATE,
                latin_only=routed,
            )
    return nears


def _store_pending(
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    pending: list[_Pending],
    keys: KeyCache,
    memory_ids: list[str],
    log: Any,
) -> None:
    """Insert the batch's new facts at once, then close the validity of those they replace
    (superseded, not deleted: they stay in history, linked to their successor)."""
    if not pending:
        return
    for new in pending:  # put in doubt by a later turn of the batch: a person decides
        if new.review:
            new.item.status = Status.PENDING_REVIEW
    memories_insert(actor=actor, namespace=namespace, items=[p.item for p in pending], keys=keys)
    now = timezone.now()
    ended = [new.item.id for new in pending if new.ended]
    if ended:
        Memory.objects.filter(pk__in=ended).update(valid_to=now, updated_at=now)
    for new in pending:
        memory_ids.append(str(new.item.id))
        if new.review:
            log(Decision.ADD, gettext_noop("uncertain: waits in the review queue"), new.item.id)
            continue
        if new.ended:
            log(
                Decision.SUPERSEDE,
                gettext_noop("ended by a later negation in the same batch"),
                None,
                new.item.id,
            )
        if not new.supersedes:
            log(Decision.ADD, gettext_noop("new fact"), new.item.id)
            continue
        superseded = Memory.objects.filter(pk__in=new.supersedes, valid_to__isnull=True)
        for old in superseded.defer(*SEARCH_FIELDS):
            _close(
                actor,
                namespace,
                old,
                now,
                successor=str(new.item.id),
                by_message=new.item.source.get("message"),
            )
            log(
                Decision.SUPERSEDE,
                gettext_noop("a new value for the same fact"),
                new.item.id,
                old.id,
            )


# The facts whose correction outdates the turn that stated them: health (allergies,
# medications, conditions), where a stale value does harm. Plans, activities and opinions
# change too, but "what did she plan in May" still wants the turn that said it (LoCoMo
# dev's recall@10 fell from 0.818 to 0.812 when every corrected turn ranked lower).
OUTDATING_CATEGORIES = {"health"}


def _mark_outdated_turn(fact: Memory, by_message: str) -> None:
    """The turn a fact came from, once no fact it stated is current, says what is no longer
    true ("I'm allergic to peanuts", corrected since): marked `outdated_by` the message
    that corrected it. Recall ranks it below that message's turn and facts whenever both
    are found (ranking.score). It stays, as what was said."""
    message = (fact.source or {}).get("message")
    if not message or fact.subject_id is None:
        return
    if (fact.source or {}).get("extractor") not in OUTDATING_CATEGORIES:
        return
    said = Memory.objects.filter(
        namespace_id=fact.namespace_id, subject_id=fact.subject_id, source__message=message
    )
    if said.filter(kind=Kind.SEMANTIC, valid_to__isnull=True).exists():
        return  # the turn still states a current fact ("... and I live in Leeds")
    for turn in said.filter(kind=Kind.EPISODIC).only("id", "metadata"):
        turn.metadata = {**turn.metadata, "outdated_by": by_message}
        turn.save(update_fields=["metadata"])


def _close(
    actor: Actor,
    namespace: Namespace,
    memory: Memory,
    now: Any,
    *,
    successor: str | None,
    by_message: str | None = None,
) -> None:
    """End a current fact, kept as history: superseded by `successor`, or ended by a
    negation (no successor). Audited."""
    memory.valid_to = now
    memory.status = Status.ACTIVE  # history, like every ended fact: no review waits on it
    note = {"superseded_by": successor} if successor else {"ended": "negated or changed"}
    if by_message and not successor:
        note["ended_by"] = by_message  # the turn that ended it (the portal shows it beside)
    memory.metadata = {**memory.metadata, **note}
    memory.updated_at = now
    memory.save(update_fields=["valid_to", "status", "metadata", "updated_at"])
    if by_message:
        _mark_outdated_turn(memory, by_message)
    details: dict[str, Any] = {"successor": successor}
    if successor is None:
        details["reason"] = "negated"
    audit_record(
        actor=actor,
        action="memory.supersede",
        namespace=namespace,
        subject_id=memory.subject_id,
        object_type="memory",
        object_id=str(memory.id),
        details=details,
    )
