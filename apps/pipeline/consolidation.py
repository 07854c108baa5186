"""Consolidation, the service that applies `apps.pipeline.decisions`: each extracted fact is
added, merged into a near-duplicate, a no-op, or supersedes the fact of its slot (kept as
history); a negation or a change ends the current facts it names (kept as history too); a
doubt sends them to review; a fact less certain than the namespace's review threshold waits
in the review queue instead. Here the inputs are loaded (the nearest facts by the database,
statements decrypted), the pure decision functions decide, and their decisions are applied
in the caller's transaction: the writes with their audit events, and every decision to the
log."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import logging
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_noop

from apps.audit import listeners
from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.facts.doubt import Dispute
from apps.facts.rules import Ending, slot_group
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
from apps.memories.services.validity import turns_end_with
from apps.namespaces.models import Namespace
from apps.pipeline import decisions, extraction
from apps.pipeline.decisions import (
    BatchFact,
    FactDecision,
    HeldFact,
    NearFact,
    NewFact,
    Outcome,
    Scope,
    SlotFact,
)
from apps.pipeline.models import (
    ConsolidationLog,
    Decision,
    Job,
    Message,
    Session,
)
from memoryhub.exceptions import ApplicationError

logger = logging.getLogger(__name__)

NEAR_FACTS = 5  # the nearest current facts of the same kind that a new one is compared with
KEPT_CORRECTION = gettext_noop("kept the subject's correction, newer than this turn")
# What the log says of a new fact that is not stored (a merge and an addition say more).
NOT_STORED = {
    Outcome.DUPLICATE: gettext_noop("near-duplicate of a current fact"),
    Outcome.BATCH_DUPLICATE: gettext_noop("near-duplicate of a fact in the same batch"),
    Outcome.KEPT_CORRECTION: KEPT_CORRECTION,
}


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


def _corrected_at(value: Any) -> datetime | None:
    """When a memory's subject corrected it (privacy portal), from its metadata's ISO time."""
    return parse_datetime(value) if value else None


def slot_hash(keys: KeyCache, namespace_id: int, slot: str) -> str:
    """A keyed hash of a fact's slot ("favourite colour"): comparable, not readable."""
    key = keys.index_key(namespace_id)
    return hmac.new(key, f"slot:{slot}".encode(), hashlib.sha256).hexdigest()[:32]


@dataclass
class _Pending:
    """A new fact of the batch, decided and waiting to be stored with the others."""

    item: NewMemory
    vector: np.ndarray  # compared with the batch's other new facts of the same `column`
    tokens: list[int]
    slot: str
    supersedes: list[Any]
    group: str = ""
    review: bool = False
    ended: bool = False  # negated by a later turn of the same batch: stored as history
    column: VectorColumn = VectorColumn.PRIMARY

    @property
    def id(self) -> uuid.UUID:
        assert self.item.id is not None  # chosen when it is decided: later facts refer to it
        return self.item.id

    def fact(self) -> BatchFact:
        """This fact as the decisions see it, as it stands now."""
        return BatchFact(
            id=self.id,
            content=self.item.content,
            vector=self.vector,
            column=self.column,
            tokens=self.tokens,
            slot=self.slot,
            group=self.group,
            of_another_person="person" in self.item.metadata,
            message=(self.item.source or {}).get("message"),
            ended=self.ended,
            review=self.review,
        )


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


@dataclass
class _Batch:
    """One call of `consolidate_and_store`: who writes where, the decisions taken so far
    (logged at the end, at once), the memories stored or changed, and the batch's new facts
    waiting to be stored (`pending`)."""

    actor: Actor
    namespace: Namespace
    subject: Subject
    session: Session
    keys: KeyCache
    job: Job | None
    message_by_position: dict[int, str]
    tags_by_message: dict[str, list[str]]
    counts: dict[str, int] = field(default_factory=dict)
    memory_ids: list[str] = field(default_factory=list)
    logs: list[ConsolidationLog] = field(default_factory=list)
    pending: list[_Pending] = field(default_factory=list)
    texts: dict[Any, str] = field(default_factory=dict)

    @cached_property
    def index_key(self) -> bytes:
        return self.keys.index_key(self.namespace.pk)

    def log(
        self,
        decision: str,
        reason: str,
        memory_id: Any,
        related: Any = None,
        sim: float | None = None,
    ) -> None:
        self.counts[decision] = self.counts.get(decision, 0) + 1
        self.logs.append(
            ConsolidationLog(
                namespace=self.namespace,
                subject=self.subject,
                job=self.job,
                decision=decision,
                reason=reason,
                memory_id=memory_id,
                related_id=related,
                similarity=sim,
            )
        )

    def source(self, candidate: extraction.Candidate) -> dict[str, Any]:
        message = self.message_by_position.get(candidate.position)
        source = {
            "session": self.session.external_id,
            "message": message,
            "extractor": candidate.category,
        }
        if candidate.model:  # an LLM's fact: the model that proposed it (else the rules')
            source["model"] = candidate.model
        return source

    def tags(self, candidate: extraction.Candidate) -> list[str]:
        """The candidate's tags and those the app sent with its turn."""
        message = self.message_by_position.get(candidate.position, "")
        return sorted(set(candidate.tags) | set(self.tags_by_message.get(message, [])))

    def certain(self, candidate: extraction.Candidate) -> bool:
        """Whether the candidate is certain enough to change facts without a person."""
        return candidate.confidence >= self.namespace.review_threshold

    def opened(self, memory: Memory) -> str:
        """A current fact's statement, decrypted once for the whole batch."""
        if memory.pk not in self.texts:
            self.texts[memory.pk] = open_memory(self.keys, memory)
        return self.texts[memory.pk]

    def held(self, memories: list[Memory], *, read: bool) -> list[HeldFact]:
        """Stored facts as the decisions see them: their statements decrypted when a value
        narrows the choice (`read`), and when their subject corrected them."""
        return [
            HeldFact(
                id=memory.id,
                statement=self.opened(memory) if read else "",
                corrected_at=_corrected_at(memory.metadata.get("corrected_at")),
            )
            for memory in memories
        ]

    def facts(self) -> list[BatchFact]:
        """The batch's new facts as the decisions see them, as they stand now."""
        return [pending.fact() for pending in self.pending]

    def waiting(self, ids: Collection[uuid.UUID]) -> list[_Pending]:
        """The batch's new facts of `ids`, in the batch's order."""
        wanted = set(ids)
        return [pending for pending in self.pending if pending.id in wanted]


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
    supersede for each semantic one against the subject's current facts
    (`decisions.decide_fact`), after applying what it ends, corrects or disputes. Every
    decision is logged with its reason.

    A fact its subject corrected in the privacy portal is never replaced, merged into or
    ended by what a turn said before the correction (`said_at`: each turn's time by
    position, a replayed turn's being its first saying (`replayed_turn_times`); without it,
    now): the correction stands over the older extracted value."""
    batch = _Batch(
        actor=actor,
        namespace=namespace,
        subject=subject,
        session=session,
        keys=keys,
        job=job,
        message_by_position=message_by_position,
        tags_by_message=tags_by_message,
    )
    _store_turns(batch, [c for c in candidates if c.kind == Kind.EPISODIC])
    semantic = _screened(batch, [c for c in candidates if c.kind != Kind.EPISODIC])
    stated = [c for c in semantic if c.content]
    vectors = dict(
        zip(
            map(id, stated),
            get_provider().embed_documents([c.content for c in stated]) if stated else [],
            strict=True,
        )
    )
    nears = _comparisons(vector_spaces.serving(), stated, vectors)
    for candidate in semantic:
        when = (said_at or {}).get(candidate.position) or timezone.now()
        _apply_changes(batch, candidate, when=when)
        if candidate.content:
            _consolidate_one(
                batch,
                candidate,
                vector=vectors[id(candidate)],
                near=nears[id(candidate)],
                when=when,
            )
    _store_pending(batch)
    ConsolidationLog.objects.bulk_create(batch.logs)
    return {"memories": batch.memory_ids, "decisions": batch.counts}


def _store_turns(batch: _Batch, episodic: list[extraction.Candidate]) -> None:
    """The conversation turns, stored as episodic memories of the session."""
    items = [
        NewMemory(
            content=c.content,
            subject_external_id=batch.subject.external_id,
            kind=Kind.EPISODIC,
            importance=c.importance,
            confidence=c.confidence,
            tags=batch.tags(c),
            source=batch.source(c),
            session_key=batch.session.external_id,
            position=c.position,
            occurred_at=c.occurred_at,
            metadata={"speaker": c.speaker} if c.speaker else {},
        )
        for c in episodic
    ]
    if not items:
        return
    stored = memories_insert(
        actor=batch.actor, namespace=batch.namespace, items=items, keys=batch.keys
    )
    for memory in stored:
        batch.memory_ids.append(str(memory.id))
        batch.log(Decision.ADD, gettext_noop("conversation turn"), memory.id)


def _screened(batch: _Batch, semantic: list[extraction.Candidate]) -> list[extraction.Candidate]:
    """The extracted facts the PII policy lets through, as it leaves them, by position.
    Extracted facts are new text (an LLM may write out what the turn only hinted at): the
    policy screens them before they are embedded or stored."""
    screened: list[extraction.Candidate] = []
    for candidate in semantic:
        try:
            result = screen_content(namespace=batch.namespace, content=candidate.content)
        except ApplicationError:
            batch.log(
                Decision.REJECT, gettext_noop("the PII policy rejects the extracted fact"), None
            )
            continue
        candidate.content = result.text
        candidate.tags = sorted(set(candidate.tags) | set(result.tags))
        screened.append(candidate)
    return sorted(screened, key=lambda c: c.position)


def _apply_changes(batch: _Batch, candidate: extraction.Candidate, *, when: datetime) -> None:
    """What a candidate changes in the facts stated before it: those it ends and those it
    corrects (only when it is certain), those it puts in doubt."""
    by_message = batch.source(candidate).get("message")
    if batch.certain(candidate) and candidate.ends:
        _end_facts(batch, candidate.ends, when=when, by_message=by_message)
    if batch.certain(candidate) and candidate.replace is not None:
        _correct_facts(batch, candidate.replace, source=batch.source(candidate), when=when)
    if candidate.disputes:
        earlier = [
            message
            for position, message in sorted(batch.message_by_position.items())
            if position < candidate.position
        ]
        _dispute_facts(batch, candidate.disputes, when=when, by_message=by_message, earlier=earlier)


def _consolidate_one(
    batch: _Batch,
    candidate: extraction.Candidate,
    *,
    vector: np.ndarray,
    near: _Near,
    when: datetime,
) -> None:
    """Decide for one new fact (`decisions.decide_fact`) and apply the decision: a no-op or
    a merge now; an addition (possibly superseding) later, with the rest of the batch, in
    `pending`. A fact less certain than the review threshold waits for a person instead:
    stored pending review, superseding nothing."""
    review = not batch.certain(candidate)
    slot = slot_hash(batch.keys, batch.namespace.pk, candidate.slot) if candidate.slot else ""
    fact = NewFact(
        tokens=index_terms(candidate.content, batch.index_key),
        slot=slot,
        vector=near.vector,
        column=near.column,
        duplicate=near.duplicate,
        same=near.same,
        review=review,
        said_at=when,
    )
    current = Memory.objects.filter(
        namespace=batch.namespace,
        subject=batch.subject,
        kind=candidate.kind,
        status=Status.ACTIVE,
        valid_to__isnull=True,
    )
    decision = decisions.decide_fact(
        fact,
        nearest=_nearest_facts(batch, candidate.kind, near),
        batch=batch.facts(),
        # A fact waiting for review supersedes nothing: its slot's facts are not read.
        slotted=_slot_facts(current, slot) if slot and not review else [],
    )
    if decision.outcome in (Outcome.ADD, Outcome.REVIEW):
        batch.pending.append(_pending_fact(batch, candidate, fact, decision, vector, near))
    elif decision.outcome == Outcome.MERGE:
        _merge(batch, current, candidate, decision)
    else:
        reason = NOT_STORED[decision.outcome]
        batch.log(Decision.NOOP, reason, decision.related, decision.related, decision.similarity)


def _slot_facts(current: QuerySet[Memory], slot: str) -> list[SlotFact]:
    """The current facts of a slot (its keyed hash): those a new value supersedes."""
    rows = current.filter(metadata__slot=slot).values_list("id", "metadata__corrected_at")
    return [SlotFact(id=i, corrected_at=_corrected_at(at)) for i, at in rows]


def _merge(
    batch: _Batch,
    current: QuerySet[Memory],
    candidate: extraction.Candidate,
    decision: FactDecision,
) -> None:
    """A restatement that says more: the current fact it restates takes it as a new version,
    as certain and as important as the more of the two."""
    assert decision.related is not None  # a merge names the fact it merges into
    memory = current.get(pk=decision.related)
    memory_update(
        actor=batch.actor,
        memory=memory,
        content=candidate.content,
        reason=gettext_noop("merged a more detailed restatement"),
        keys=batch.keys,
        confidence=max(memory.confidence, candidate.confidence),
        importance=max(memory.importance, candidate.importance),
    )
    batch.memory_ids.append(str(decision.related))
    reason = gettext_noop("restated with more detail")
    batch.log(Decision.MERGE, reason, decision.related, decision.related, decision.similarity)


def _nearest_facts(batch: _Batch, kind: str, near: _Near) -> list[NearFact]:
    """The nearest current facts of `kind` by meaning, most similar first, similarity
    computed by the database: through the HNSW index, then by comparing every vector should
    the walk come back with fewer than it asked for (few such facts, or a graph crowded with
    deleted rows that left the subject's own unreached: a duplicate would then be stored).
    Compared in one model's space (`_comparisons`): another model's vectors live in another
    space, and a fact they hold is not near this one by any distance to it."""
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
                    "namespace": batch.namespace.pk,
                    "subject": batch.subject.pk,
                    "kind": kind,
                    "active": Status.ACTIVE.value,
                    "limit": NEAR_FACTS,
                },
            )
            # Iterative index scans (settings.HNSW_SEARCH_OPTIONS) return rows in relaxed order.
            nearest = sorted(cursor.fetchall(), key=lambda row: -row[1])
            if len(nearest) >= NEAR_FACTS:
                break
    return [
        NearFact(
            id=memory_id,
            similarity=similarity,
            tokens=token_index,
            slot=slot or "",
            corrected_at=_corrected_at(corrected_at),
        )
        for memory_id, similarity, token_index, slot, corrected_at in nearest
    ]


def _pending_fact(
    batch: _Batch,
    candidate: extraction.Candidate,
    fact: NewFact,
    decision: FactDecision,
    vector: np.ndarray,
    near: _Near,
) -> _Pending:
    """The new fact an ADD or REVIEW decision stores, with the rest of the batch: keyed
    hashes of its slot, the slot's group and the person it is about; what it supersedes."""
    namespace_id = batch.namespace.pk
    group = slot_hash(batch.keys, namespace_id, slot_group(candidate.slot)) if fact.slot else ""
    person = candidate.slot.rpartition("|")[0]
    metadata: dict[str, Any] = {"slot": fact.slot, "group": group} if fact.slot else {}
    if person:
        metadata["person"] = slot_hash(batch.keys, namespace_id, f"person:{person}")
    if decision.supersedes:
        metadata["supersedes"] = [str(i) for i in decision.supersedes]
    review = decision.outcome == Outcome.REVIEW
    return _Pending(
        item=NewMemory(
            id=uuid.uuid4(),
            content=candidate.content,
            subject_external_id=batch.subject.external_id,
            kind=candidate.kind,
            importance=candidate.importance,
            confidence=candidate.confidence,
            tags=batch.tags(candidate),
            metadata=metadata,
            source=batch.source(candidate),
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
        tokens=list(fact.tokens),
        slot=fact.slot,
        group=group,
        supersedes=list(decision.supersedes),
        review=review,
    )


def _correct_facts(
    batch: _Batch, replace: tuple[str, str], *, source: dict[str, Any], when: datetime
) -> None:
    """A corrected value ("it's Joan, not Jon"): each current fact that speaks of the old
    value is said again with the new one, in the same slot, superseding it (history kept);
    a fact of this same batch is corrected before it is stored."""
    old, new = replace
    in_batch = dict(decisions.corrected_in_batch(batch.facts(), old=old, new=new))
    corrected_pending = batch.waiting(in_batch)
    for other in corrected_pending:
        other.item = dataclasses.replace(other.item, content=in_batch[other.id])
    current = list(
        _open_facts(batch.namespace, batch.subject, Status.ACTIVE).order_by("created_at")[:500]
    )
    corrections = decisions.decide_corrections(
        batch.held(current, read=True), old=old, new=new, when=when
    )
    texts = [o.item.content for o in corrected_pending] + [text for _, text in corrections]
    vectors = list(get_provider().embed_documents(texts)) if texts else []  # one call
    for other, vector in zip(corrected_pending, vectors, strict=False):
        other.item = dataclasses.replace(other.item, embedding=vector)
        other.vector = vector
    by_id = {memory.id: memory for memory in current}
    for (memory_id, corrected), vector in zip(
        corrections, vectors[len(corrected_pending) :], strict=True
    ):
        memory = by_id[memory_id]
        metadata = {k: v for k, v in memory.metadata.items() if k in ("slot", "group", "person")}
        metadata["supersedes"] = [str(memory.id)]
        batch.pending.append(
            _Pending(
                item=NewMemory(
                    id=uuid.uuid4(),
                    content=corrected,
                    subject_external_id=batch.subject.external_id,
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
                tokens=index_terms(corrected, batch.index_key),
                slot=memory.metadata.get("slot", ""),
                group=memory.metadata.get("group", ""),
                supersedes=[memory.id],
            )
        )


def _end_facts(
    batch: _Batch, endings: list[Ending], *, when: datetime, by_message: str | None
) -> None:
    """End the current facts a negation or a change names (history kept: valid_to is set,
    nothing is deleted): those of a slot, or of a slot's kind, or any of the user's own,
    narrowed to those that speak of the ending's value (`decisions.decide_ending`). Facts
    of this same batch still waiting to be stored are ended the same way."""
    now = timezone.now()
    namespace_id = batch.namespace.pk
    for ending in endings:
        scope = Scope(
            slot=slot_hash(batch.keys, namespace_id, ending.slot) if ending.slot else "",
            group=slot_hash(batch.keys, namespace_id, ending.group) if ending.group else "",
            value=ending.value,
        )
        # Facts waiting for a person end too: a hedged "I think I'm allergic to penicillin"
        # pending review, or one in dispute, is answered by "I'm not allergic to penicillin".
        current = _open_facts(
            batch.namespace, batch.subject, Status.ACTIVE, Status.PENDING_REVIEW, Status.DISPUTED
        )
        if scope.slot:
            current = current.filter(metadata__slot=scope.slot)
        elif scope.group:
            current = current.filter(metadata__group=scope.group)
        else:  # any of the user's own facts (never another person's)
            current = current.exclude(metadata__has_key="person")
        named = list(current.order_by("created_at")[:500])
        by_id = {memory.id: memory for memory in named}
        held = batch.held(named, read=bool(scope.value))
        for memory_id, outcome in decisions.decide_ending(held, value=scope.value, when=when):
            if outcome == Outcome.KEPT_CORRECTION:
                batch.log(Decision.NOOP, KEPT_CORRECTION, None, memory_id)
                continue
            memory = by_id[memory_id]
            _close(batch, memory, now, successor=None, by_message=by_message)
            reason = gettext_noop("ended by a later negation or change")
            batch.log(Decision.SUPERSEDE, reason, None, memory_id)
        for other in batch.waiting(decisions.ended_in_batch(batch.facts(), scope)):
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
    batch: _Batch,
    disputes: list[Dispute],
    *,
    when: datetime,
    by_message: str | None,
    earlier: list[str],
) -> None:
    """Put in doubt the current facts a turn disputes (`apps.facts.doubt`,
    `decisions.decide_dispute`): each becomes disputed, out of the current facts (history
    kept) and in the review queue beside the turn `by_message`, until a person confirms,
    corrects or ends it. A fact of the same batch still waiting to be stored waits for a
    person instead (pending review)."""
    for dispute in disputes:
        if dispute.last_said:
            targets = _last_said(batch, earlier)
            value = ""
        else:  # a group's facts, or (no group: an LLM's) any of the user's own
            group = (
                slot_hash(batch.keys, batch.namespace.pk, dispute.group) if dispute.group else ""
            )
            scope = Scope(group=group, value=dispute.value)
            for other in batch.waiting(decisions.disputed_in_batch(batch.facts(), scope)):
                other.review = True
            facts = _current_facts(batch.namespace, batch.subject)
            facts = (
                facts.filter(metadata__group=group)
                if group
                else facts.exclude(metadata__has_key="person")
            )
            targets = list(facts.order_by("created_at")[:500])
            value = dispute.value
        by_id = {memory.id: memory for memory in targets}
        held = batch.held(targets, read=bool(value))
        for memory_id, outcome in decisions.decide_dispute(held, value=value, when=when):
            if outcome == Outcome.KEPT_CORRECTION:
                batch.log(Decision.NOOP, KEPT_CORRECTION, None, memory_id)
                continue
            _dispute(batch.actor, batch.namespace, by_id[memory_id], by_message=by_message)
            reason = gettext_noop("put in doubt by a later turn; sent to review")
            batch.log(Decision.DISPUTE, reason, None, memory_id)


def _last_said(batch: _Batch, earlier: list[str]) -> list[Memory]:
    """The facts of the speaker's previous statement ("that's my brother, not me"): those
    of the batch's latest earlier turn that gave any (they wait for a person: pending
    review, and none is returned), else the current facts of the session's latest turn
    that gave any."""
    said = batch.waiting(decisions.last_said_in_batch(batch.facts(), earlier))
    if said:
        for other in said:
            other.review = True
        return []
    current = _current_facts(batch.namespace, batch.subject)
    latest = (
        current.filter(source__session=batch.session.external_id)
        .order_by("-created_at")
        .values_list("source__message", flat=True)
        .first()
    )
    if not latest:
        return []
    return list(current.filter(source__message=latest)[:50])


def _dispute(actor: Actor, namespace: Namespace, memory: Memory, *, by_message: str | None) -> None:
    """A current fact put in doubt: disputed, `disputed_by` the turn's message, and never
    served while in doubt (recall serves active memories only); the turn that stated it ends
    with it (`turns_end_with`), until a reviewer confirms the fact. Audited."""
    now = timezone.now()
    memory.namespace = namespace  # read by the turns' audit events
    memory.status = Status.DISPUTED
    memory.metadata = {
        **memory.metadata,
        "disputed_by": by_message or "",
        "disputed_at": now.isoformat(),
    }
    memory.metadata.pop("reviewed_at", None)
    memory.updated_at = now
    memory.save(update_fields=["status", "metadata", "updated_at"])
    turns_end_with(actor=actor, fact=memory, when=now)
    with listeners.private(about=memory):  # the webhooks' event reads it, not the table
        audit_record(
            actor=actor,
            action="memory.dispute",
            namespace=namespace,
            subject_id=memory.subject_id,
            object_type="memory",
            object_id=str(memory.id),
            details={"by_message": by_message},
        )


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


def _store_pending(batch: _Batch) -> None:
    """Insert the batch's new facts at once, then close the validity of those they replace
    (superseded, not deleted: they stay in history, linked to their successor)."""
    pending = batch.pending
    if not pending:
        return
    for new in pending:  # put in doubt by a later turn of the batch: a person decides
        if new.review:
            new.item = dataclasses.replace(new.item, status=Status.PENDING_REVIEW)
    stored = memories_insert(
        actor=batch.actor,
        namespace=batch.namespace,
        items=[p.item for p in pending],
        keys=batch.keys,
    )
    now = timezone.now()
    for new, memory in zip(pending, stored, strict=True):
        if new.ended:  # ended by a later turn of this batch: with the turn that stated it
            _close(batch, memory, now, successor=None)
    for new in pending:
        batch.memory_ids.append(str(new.item.id))
        if new.review:
            reason = gettext_noop("uncertain: waits in the review queue")
            batch.log(Decision.ADD, reason, new.item.id)
            continue
        if new.ended:
            reason = gettext_noop("ended by a later negation in the same batch")
            batch.log(Decision.SUPERSEDE, reason, None, new.item.id)
        if not new.supersedes:
            batch.log(Decision.ADD, gettext_noop("new fact"), new.item.id)
            continue
        superseded = Memory.objects.filter(pk__in=new.supersedes, valid_to__isnull=True)
        for old in superseded.defer(*SEARCH_FIELDS):
            _close(
                batch,
                old,
                now,
                successor=str(new.item.id),
                by_message=new.item.source.get("message"),
            )
            reason = gettext_noop("a new value for the same fact")
            batch.log(Decision.SUPERSEDE, reason, new.item.id, old.id)


def _close(
    batch: _Batch,
    memory: Memory,
    now: Any,
    *,
    successor: str | None,
    by_message: str | None = None,
) -> None:
    """End a current fact, kept as history: superseded by `successor`, or ended by a
    negation (no successor), and with it the turn that stated it (`turns_end_with`), which
    no longer tells what holds. Audited."""
    actor, namespace = batch.actor, batch.namespace
    memory.namespace = namespace  # read by the turns' audit events: no query per fact
    memory.valid_to = now
    memory.superseded_by_id = uuid.UUID(successor) if successor else None
    memory.status = Status.ACTIVE  # history, like every ended fact: no review waits on it
    if not successor:
        note = {"ended": "negated or changed"}
        if by_message:
            note["ended_by"] = by_message  # the turn that ended it (the portal shows it beside)
        memory.metadata = {**memory.metadata, **note}
    memory.updated_at = now
    memory.save(update_fields=["valid_to", "superseded_by", "status", "metadata", "updated_at"])
    turns_end_with(actor=actor, fact=memory, when=now, successor=memory.superseded_by_id)
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
