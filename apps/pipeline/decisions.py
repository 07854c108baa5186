"""Consolidation's decisions, as pure functions over plain values (no Django, no database).

`decide_fact` decides what becomes of one new fact, given the current facts nearest to it in
meaning, the facts of its own batch not stored yet and the current facts of its slot: a
near-duplicate is a no-op, a restatement that says more merges into the fact it restates, a
new value for a slot supersedes the slot's facts (kept as history), and a fact less certain
than the namespace's review threshold waits for a person. `decide_ending`, `decide_dispute`
and `decide_corrections` decide which stored facts a negation, a doubt or a corrected value
touches; the `*_in_batch` functions, which facts of the batch. Throughout, a fact its subject
corrected (privacy portal) at or after the time of the turn a change comes from is kept.

The caller (`apps.pipeline.consolidation`) loads these inputs, with their statements
decrypted, and applies the decisions: the writes, their audit events and the log.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

import numpy as np

from apps.facts.rules import speaks_of, substitute

# With a model's near-duplicate cosine (vector_spaces.*_DUPLICATE), this share of
# the tokens: the same fact, said again.
DUPLICATE_OVERLAP = 0.6


class Outcome(StrEnum):
    """What becomes of a new fact, or of a stored fact a turn names."""

    DUPLICATE = "duplicate"  # a current fact says it already: nothing is stored
    BATCH_DUPLICATE = "batch_duplicate"  # a fact of the same batch says it already
    KEPT_CORRECTION = "kept_correction"  # the subject's correction is newer: it stands
    MERGE = "merge"  # restates a current fact with more detail: a new version of it
    ADD = "add"  # stored, superseding the current facts of its slot (kept as history)
    REVIEW = "review"  # stored pending review, superseding nothing: a person decides
    END = "end"  # a stored fact a negation or change ends (kept as history)
    DISPUTE = "dispute"  # a stored fact put in doubt: disputed, in the review queue


@dataclass(frozen=True)
class NewFact:
    """A fact a turn states, as it is compared: its keyed-hash tokens, the keyed hash of its
    slot ("" for none), its vector in the space of `column` with that model's near-duplicate
    cosines (`duplicate` with DUPLICATE_OVERLAP of the tokens, `same` alone), whether it
    waits for a person (`review`) and when its turn was said (`said_at`)."""

    tokens: Sequence[int]
    slot: str
    vector: np.ndarray
    column: str
    duplicate: float
    same: float
    review: bool = False
    said_at: datetime | None = None


@dataclass(frozen=True)
class NearFact:
    """A current fact of the new fact's kind near it in meaning, with their cosine."""

    id: uuid.UUID
    similarity: float
    tokens: Sequence[int]
    slot: str = ""
    corrected_at: datetime | None = None  # when its subject corrected it, if ever


@dataclass(frozen=True)
class SlotFact:
    """A current fact of the new fact's slot: the one a new value supersedes."""

    id: uuid.UUID
    corrected_at: datetime | None = None


@dataclass(frozen=True)
class BatchFact:
    """A fact of the same batch, decided already but not stored yet. `ended`: negated by a
    later turn of the batch; `review`: waiting for a person."""

    id: uuid.UUID
    content: str
    vector: np.ndarray
    column: str
    tokens: Sequence[int]
    slot: str = ""
    group: str = ""
    of_another_person: bool = False  # its slot names someone else ("sister|home")
    message: str | None = None  # the turn it comes from
    ended: bool = False
    review: bool = False


@dataclass(frozen=True)
class HeldFact:
    """A stored fact an ending, a dispute or a correction may touch, its statement
    decrypted ("" where no value narrows the choice: then it is not read)."""

    id: uuid.UUID
    statement: str
    corrected_at: datetime | None = None


@dataclass(frozen=True)
class Scope:
    """The facts an ending or a dispute names: those of a slot, or of a slot's group (keyed
    hashes), or with neither any of the user's own (never another person's); narrowed to
    those that speak of `value` when given."""

    slot: str = ""
    group: str = ""
    value: str = ""


@dataclass(frozen=True)
class FactDecision:
    """What becomes of a new fact. `related`: the fact it duplicates, merges into or yields
    to, with their cosine where it was compared; `supersedes`: the facts an added one ends."""

    outcome: Outcome
    related: uuid.UUID | None = None
    similarity: float | None = None
    supersedes: tuple[uuid.UUID, ...] = ()


def corrected_since(corrected_at: datetime | None, when: datetime | None) -> bool:
    """Whether a fact's subject corrected it (privacy portal) at or after `when`, the time of
    the turn a new value comes from (none: any time): then the correction stands."""
    return corrected_at is not None and (when is None or corrected_at >= when)


def says_no_more(tokens: Collection[int], than: Collection[int], *, slot: str) -> bool:
    """Whether a fact of `tokens` says nothing that a fact of `than` does not, so the two are
    one fact: within a slot only the same words are ("用户喜欢香菜" is not "用户不喜欢吃香菜",
    "住在深圳" not "住在上海"); elsewhere, saying less is saying it again. Two facts that each
    hold a word the other lacks differ in some value, however alike their vectors."""
    mine, theirs = set(tokens), set(than)
    return mine == theirs or (not slot and mine <= theirs)


def token_overlap(a: Collection[int], b: Collection[int]) -> float:
    """The Jaccard overlap of two facts' tokens (0 when either has none)."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def _alike(fact: NewFact, similarity: float, tokens: Collection[int]) -> bool:
    """Near enough in meaning to be compared as the same fact: the same by the vectors alone,
    or near-duplicate vectors sharing most tokens."""
    return similarity >= fact.same or (
        similarity >= fact.duplicate and token_overlap(fact.tokens, tokens) >= DUPLICATE_OVERLAP
    )


def decide_fact(
    fact: NewFact,
    *,
    nearest: Sequence[NearFact],
    batch: Sequence[BatchFact],
    slotted: Sequence[SlotFact],
) -> FactDecision:
    """What becomes of a new fact, decided in this order:

    1. The first current fact of `nearest` (most similar first) alike enough and of the
       same slot (another slot's fact never counts, however alike: "home city" is not "work
       city"): if the new fact says nothing more (`says_no_more`), DUPLICATE; if the
       subject corrected that fact since the turn, KEPT_CORRECTION; a fact without a slot
       and not waiting for review that says more, MERGE into it. Otherwise on to 2.
    2. A fact of the batch, not ended, of the same slot and vector space, alike enough and
       holding every token of the new one: BATCH_DUPLICATE.
    3. A fact waiting for review: REVIEW, superseding nothing.
    4. A current fact of its slot (`slotted`) its subject corrected since: KEPT_CORRECTION.
    5. ADD, superseding the current facts of its slot and the batch's facts of that slot
       that are neither ended nor waiting for review."""
    for near in nearest:
        if not _alike(fact, near.similarity, near.tokens):
            continue
        if (fact.slot or near.slot) and fact.slot != near.slot:
            continue
        if says_no_more(fact.tokens, near.tokens, slot=fact.slot):
            return FactDecision(Outcome.DUPLICATE, near.id, near.similarity)
        if corrected_since(near.corrected_at, fact.said_at):
            return FactDecision(Outcome.KEPT_CORRECTION, near.id, near.similarity)
        if fact.slot or fact.review:
            break  # a new value for the same slot ("12 Baker St" -> "14 Baker St"): supersede
        return FactDecision(Outcome.MERGE, near.id, near.similarity)
    for other in batch:
        if other.ended or ((fact.slot or other.slot) and fact.slot != other.slot):
            continue
        if other.column != fact.column:
            continue  # vectors of two models: not comparable
        similarity = float(fact.vector @ other.vector)
        if _alike(fact, similarity, other.tokens) and set(fact.tokens) <= set(other.tokens):
            return FactDecision(Outcome.BATCH_DUPLICATE, other.id, similarity)
    if fact.review:
        return FactDecision(Outcome.REVIEW)
    if not fact.slot:
        return FactDecision(Outcome.ADD)
    for held in slotted:
        if corrected_since(held.corrected_at, fact.said_at):
            return FactDecision(Outcome.KEPT_CORRECTION, held.id)
    supersedes = [held.id for held in slotted]
    supersedes += [
        other.id
        for other in batch
        if other.slot == fact.slot and not other.ended and not other.review
    ]
    return FactDecision(Outcome.ADD, supersedes=tuple(supersedes))


def _touched(
    held: Sequence[HeldFact], *, value: str, when: datetime | None, outcome: Outcome
) -> list[tuple[uuid.UUID, Outcome]]:
    """`outcome` for each of `held` that speaks of `value` (any, without one), in order; a
    fact its subject corrected since the turn keeps the correction instead."""
    decided = []
    for fact in held:
        if value and not speaks_of(fact.statement, value):
            continue
        if corrected_since(fact.corrected_at, when):
            decided.append((fact.id, Outcome.KEPT_CORRECTION))
        else:
            decided.append((fact.id, outcome))
    return decided


def decide_ending(
    held: Sequence[HeldFact], *, value: str, when: datetime | None
) -> list[tuple[uuid.UUID, Outcome]]:
    """Which of the stored facts an ending names (`held`: those of its slot, its group or
    the user's own) it ends (END): those that speak of its `value`, when it has one. A fact
    its subject corrected since the turn stands (KEPT_CORRECTION)."""
    return _touched(held, value=value, when=when, outcome=Outcome.END)


def decide_dispute(
    held: Sequence[HeldFact], *, value: str, when: datetime | None
) -> list[tuple[uuid.UUID, Outcome]]:
    """Which of the stored facts a dispute names (`held`) it puts in doubt (DISPUTE): those
    that speak of its `value`, when it has one. A fact its subject corrected since the turn
    stands (KEPT_CORRECTION)."""
    return _touched(held, value=value, when=when, outcome=Outcome.DISPUTE)


def decide_corrections(
    held: Sequence[HeldFact], *, old: str, new: str, when: datetime | None
) -> list[tuple[uuid.UUID, str]]:
    """The stored facts a corrected value ("it's Joan, not Jon") restates, each with its new
    statement: those that speak of `old`, unless their subject corrected them since the
    turn."""
    corrections = []
    for fact in held:
        if corrected_since(fact.corrected_at, when):
            continue  # the subject's own correction is newer than this turn
        statement = fact.statement
        corrected = substitute(statement, old, new) if speaks_of(statement, old) else statement
        if corrected != statement:
            corrections.append((fact.id, corrected))
    return corrections


def corrected_in_batch(
    batch: Sequence[BatchFact], *, old: str, new: str
) -> list[tuple[uuid.UUID, str]]:
    """The batch's facts a corrected value restates before they are stored, each with its new
    statement: those neither ended nor waiting for review that speak of `old`."""
    return [
        (other.id, substitute(other.content, old, new))
        for other in batch
        if not other.ended and not other.review and speaks_of(other.content, old)
    ]


def ended_in_batch(batch: Sequence[BatchFact], scope: Scope) -> list[uuid.UUID]:
    """The batch's facts an ending ends, chosen as the stored ones are (of its slot and its
    group, each when given; with neither, the user's own), those ended already or waiting for
    review aside."""
    ended = []
    for other in batch:
        if other.ended or other.review:
            continue
        if (scope.slot and other.slot != scope.slot) or (
            scope.group and other.group != scope.group
        ):
            continue
        if not (scope.slot or scope.group) and other.of_another_person:
            continue
        if scope.value and not speaks_of(other.content, scope.value):
            continue
        ended.append(other.id)
    return ended


def disputed_in_batch(batch: Sequence[BatchFact], scope: Scope) -> list[uuid.UUID]:
    """The batch's facts a dispute of a group (or, with none, of the user's own facts) puts
    in doubt: they wait for a person (pending review) instead of being stored current."""
    disputed = []
    for other in batch:
        if other.ended or (scope.group and other.group != scope.group):
            continue
        if not scope.group and other.of_another_person:
            continue
        if not scope.value or speaks_of(other.content, scope.value):
            disputed.append(other.id)
    return disputed


def last_said_in_batch(batch: Sequence[BatchFact], earlier: Sequence[str]) -> list[uuid.UUID]:
    """The batch's facts from the latest of the `earlier` turns (oldest first) that gave any:
    what "that's my brother, not me" disputes. Empty: no earlier turn of the batch gave a
    fact (the speaker's previous statement is among the stored facts)."""
    for message in reversed(earlier):
        said = [other.id for other in batch if other.message == message]
        if said:
            return said
    return []
