"""Consolidation's pure decisions (apps/pipeline/decisions.py), on hand-made facts: no
database, no Django."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.pipeline.decisions import (
    BatchFact,
    FactDecision,
    HeldFact,
    NearFact,
    NewFact,
    Outcome,
    Scope,
    SlotFact,
    corrected_in_batch,
    corrected_since,
    decide_corrections,
    decide_dispute,
    decide_ending,
    decide_fact,
    disputed_in_batch,
    ended_in_batch,
    last_said_in_batch,
    says_no_more,
    token_overlap,
)
from tests.conftest import run_python

SAID = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
BEFORE = SAID - timedelta(days=1)
AFTER = SAID + timedelta(days=1)
DUPLICATE, SAME = 0.92, 0.985  # the primary model's near-duplicate cosines
EAST = np.array([1.0, 0.0])
NORTH = np.array([0.0, 1.0])
HOME, WORK = "slot-home-city", "slot-work-city"


def ids(count: int) -> list[uuid.UUID]:
    return [uuid.uuid4() for _ in range(count)]


def new_fact(
    tokens: Sequence[int] = (1, 2, 3),
    *,
    slot: str = "",
    review: bool = False,
    said_at: datetime | None = SAID,
    column: str = "primary",
) -> NewFact:
    return NewFact(
        tokens=list(tokens),
        slot=slot,
        vector=EAST,
        column=column,
        duplicate=DUPLICATE,
        same=SAME,
        review=review,
        said_at=said_at,
    )


def near(
    tokens: Sequence[int],
    *,
    similarity: float = 0.99,
    slot: str = "",
    corrected_at: datetime | None = None,
) -> NearFact:
    return NearFact(uuid.uuid4(), similarity, list(tokens), slot, corrected_at)


def in_batch(
    tokens: Sequence[int] = (1, 2, 3),
    *,
    content: str = "The user lives in Leeds.",
    vector: np.ndarray = EAST,
    column: str = "primary",
    slot: str = "",
    group: str = "",
    of_another_person: bool = False,
    message: str | None = "m1",
    ended: bool = False,
    review: bool = False,
) -> BatchFact:
    return BatchFact(
        id=uuid.uuid4(),
        content=content,
        vector=vector,
        column=column,
        tokens=list(tokens),
        slot=slot,
        group=group,
        of_another_person=of_another_person,
        message=message,
        ended=ended,
        review=review,
    )


def decide(
    fact: NewFact,
    nearest: Sequence[NearFact] = (),
    batch: Sequence[BatchFact] = (),
    slotted: Sequence[SlotFact] = (),
) -> FactDecision:
    return decide_fact(fact, nearest=nearest, batch=batch, slotted=slotted)


# --- a new fact against the current facts near it ---------------------------------------------


def test_a_fact_said_again_is_a_duplicate_of_the_current_one() -> None:
    current = near([1, 2, 3], similarity=0.99)
    decision = decide(new_fact([1, 2, 3]), [current])
    assert decision == FactDecision(Outcome.DUPLICATE, current.id, 0.99)


def test_saying_less_without_a_slot_is_saying_it_again() -> None:
    current = near([1, 2, 3, 4])
    assert decide(new_fact([1, 2, 3]), [current]).outcome == Outcome.DUPLICATE


def test_a_fact_that_says_more_without_a_slot_merges_into_the_most_similar_one() -> None:
    first, second = near([1, 2], similarity=0.99), near([1, 2], similarity=0.986)
    decision = decide(new_fact([1, 2, 3]), [first, second])
    assert decision == FactDecision(Outcome.MERGE, first.id, 0.99)


def test_a_near_duplicate_cosine_needs_most_tokens_shared() -> None:
    sharing = near([1, 2, 3, 4], similarity=0.93)  # 3 of 4 tokens: overlap 0.75
    apart = near([1, 5, 6, 7], similarity=0.93)  # 1 of 7 tokens
    assert decide(new_fact([1, 2, 3]), [sharing]).outcome == Outcome.DUPLICATE
    assert decide(new_fact([1, 2, 3]), [apart]) == FactDecision(Outcome.ADD)


def test_a_fact_too_far_in_meaning_is_not_compared() -> None:
    far = near([1, 2, 3], similarity=0.91)
    assert decide(new_fact([1, 2, 3]), [far]) == FactDecision(Outcome.ADD)


def test_a_cosine_at_the_same_threshold_needs_no_shared_token() -> None:
    same = near([7, 8], similarity=SAME)
    assert decide(new_fact([1, 2, 3]), [same]).outcome == Outcome.MERGE


def test_a_current_fact_of_another_slot_never_counts_however_alike() -> None:
    work = near([1, 2, 3], similarity=0.999, slot=WORK)
    assert decide(new_fact([1, 2, 3], slot=HOME), [work]) == FactDecision(Outcome.ADD)
    assert decide(new_fact([1, 2, 3]), [work]) == FactDecision(Outcome.ADD)


def test_the_same_words_in_the_same_slot_are_a_duplicate() -> None:
    current = near([1, 2, 3], slot=HOME)
    assert decide(new_fact([1, 2, 3], slot=HOME), [current]).outcome == Outcome.DUPLICATE


def test_within_a_slot_saying_less_is_a_new_value_that_supersedes() -> None:
    (old,) = ids(1)
    current = near([1, 2, 3, 4], slot=HOME)
    decision = decide(new_fact([1, 2, 3], slot=HOME), [current], slotted=[SlotFact(old)])
    assert decision == FactDecision(Outcome.ADD, supersedes=(old,))


def test_a_new_value_for_a_slot_supersedes_the_slots_current_facts() -> None:
    a, b = ids(2)
    current = near([1, 2, 9], slot=HOME)
    decision = decide(new_fact([1, 2, 3], slot=HOME), [current], slotted=[SlotFact(a), SlotFact(b)])
    assert decision == FactDecision(Outcome.ADD, supersedes=(a, b))


def test_a_fact_without_a_slot_supersedes_nothing() -> None:
    (old,) = ids(1)
    assert decide(new_fact(), slotted=[SlotFact(old)]) == FactDecision(Outcome.ADD)


# --- the subject's corrections stand over older turns -------------------------------------------


def test_a_near_fact_corrected_after_the_turn_keeps_the_correction() -> None:
    corrected = near([1, 2], corrected_at=AFTER)
    decision = decide(new_fact([1, 2, 3]), [corrected])
    assert decision == FactDecision(Outcome.KEPT_CORRECTION, corrected.id, 0.99)


def test_a_correction_at_the_turns_own_time_stands() -> None:
    corrected = near([1, 2], corrected_at=SAID)
    assert decide(new_fact([1, 2, 3]), [corrected]).outcome == Outcome.KEPT_CORRECTION


def test_a_correction_older_than_the_turn_gives_way_to_its_value() -> None:
    stale = near([1, 2], corrected_at=BEFORE)
    assert decide(new_fact([1, 2, 3]), [stale]).outcome == Outcome.MERGE


def test_without_the_turns_time_any_correction_stands() -> None:
    corrected = near([1, 2], corrected_at=BEFORE)
    decision = decide(new_fact([1, 2, 3], said_at=None), [corrected])
    assert decision.outcome == Outcome.KEPT_CORRECTION


def test_a_duplicate_of_a_corrected_fact_is_still_a_duplicate() -> None:
    corrected = near([1, 2, 3], corrected_at=AFTER)
    assert decide(new_fact([1, 2, 3]), [corrected]).outcome == Outcome.DUPLICATE


def test_a_new_value_for_a_slot_its_subject_corrected_since_is_not_stored() -> None:
    kept, other = ids(2)
    slotted = [SlotFact(other, BEFORE), SlotFact(kept, AFTER)]
    decision = decide(new_fact([1, 2, 3], slot=HOME), slotted=slotted)
    assert decision == FactDecision(Outcome.KEPT_CORRECTION, kept)


def test_a_slots_fact_corrected_before_the_turn_is_superseded() -> None:
    (stale,) = ids(1)
    decision = decide(new_fact(slot=HOME), slotted=[SlotFact(stale, BEFORE)])
    assert decision == FactDecision(Outcome.ADD, supersedes=(stale,))


# --- facts waiting for a person -----------------------------------------------------------------


def test_an_uncertain_fact_waits_for_review_instead_of_merging() -> None:
    current = near([1, 2])
    assert decide(new_fact([1, 2, 3], review=True), [current]) == FactDecision(Outcome.REVIEW)


def test_an_uncertain_new_value_supersedes_nothing() -> None:
    (old,) = ids(1)
    pending = in_batch([7, 8], slot=HOME, vector=NORTH)
    decision = decide(
        new_fact(slot=HOME, review=True), batch=[pending], slotted=[SlotFact(old, AFTER)]
    )
    assert decision == FactDecision(Outcome.REVIEW)


def test_an_uncertain_fact_said_again_is_a_duplicate() -> None:
    current = near([1, 2, 3])
    assert decide(new_fact(review=True), [current]).outcome == Outcome.DUPLICATE


# --- a new fact against the facts of its own batch ----------------------------------------------


def test_a_fact_the_batch_holds_already_is_a_batch_duplicate() -> None:
    earlier = in_batch([1, 2, 3, 4])
    decision = decide(new_fact([1, 2, 3]), batch=[earlier])
    assert decision == FactDecision(Outcome.BATCH_DUPLICATE, earlier.id, 1.0)


def test_a_batch_fact_missing_a_token_of_the_new_one_is_no_duplicate() -> None:
    earlier = in_batch([1, 2, 4])
    assert decide(new_fact([1, 2, 3]), batch=[earlier]) == FactDecision(Outcome.ADD)


def test_an_ended_a_far_or_another_models_batch_fact_is_not_compared() -> None:
    ended = in_batch(ended=True)
    far = in_batch(vector=NORTH)
    other_model = in_batch(column="multilingual")
    other_slot = in_batch(slot=WORK)
    for earlier in (ended, far, other_model, other_slot):
        assert decide(new_fact(), batch=[earlier]) == FactDecision(Outcome.ADD)


def test_a_new_value_supersedes_the_batchs_current_facts_of_its_slot() -> None:
    (stored,) = ids(1)
    earlier = in_batch([7, 8], slot=HOME, vector=NORTH)
    ended = in_batch([7, 9], slot=HOME, vector=NORTH, ended=True)
    waiting = in_batch([7, 6], slot=HOME, vector=NORTH, review=True)
    elsewhere = in_batch([7, 5], slot=WORK, vector=NORTH)
    decision = decide(
        new_fact(slot=HOME),
        batch=[earlier, ended, waiting, elsewhere],
        slotted=[SlotFact(stored)],
    )
    assert decision == FactDecision(Outcome.ADD, supersedes=(stored, earlier.id))


# --- stored facts an ending, a dispute or a correction names ------------------------------------


def held(statement: str, corrected_at: datetime | None = None) -> HeldFact:
    return HeldFact(uuid.uuid4(), statement, corrected_at)


def test_an_ending_ends_the_facts_that_speak_of_its_value() -> None:
    peanuts, shellfish = (
        held("The user is allergic to peanuts."),
        held("The user is allergic to shellfish."),
    )
    decided = decide_ending([peanuts, shellfish], value="peanuts", when=SAID)
    assert decided == [(peanuts.id, Outcome.END)]


def test_an_ending_without_a_value_ends_every_fact_it_names() -> None:
    facts = [held(""), held("")]
    decided = decide_ending(facts, value="", when=SAID)
    assert decided == [(facts[0].id, Outcome.END), (facts[1].id, Outcome.END)]


def test_an_ending_keeps_a_health_fact_its_subject_corrected_since() -> None:
    corrected = held("The user is allergic to penicillin.", corrected_at=AFTER)
    stale = held("The user takes penicillin daily.", corrected_at=BEFORE)
    decided = decide_ending([corrected, stale], value="penicillin", when=SAID)
    assert decided == [(corrected.id, Outcome.KEPT_CORRECTION), (stale.id, Outcome.END)]


def test_a_dispute_puts_in_doubt_the_facts_of_its_value_unless_corrected_since() -> None:
    doubted = held("The user's brother lives in Leeds.")
    corrected = held("The user's sister lives in Leeds.", corrected_at=SAID)
    unrelated = held("The user works as a nurse.")
    decided = decide_dispute([doubted, corrected, unrelated], value="Leeds", when=SAID)
    assert decided == [(doubted.id, Outcome.DISPUTE), (corrected.id, Outcome.KEPT_CORRECTION)]


def test_a_correction_restates_the_facts_of_the_old_value() -> None:
    named = held("The user's brother is named Jon.")
    elsewhere = held("The user lives in Leeds.")
    corrected = held("The user's cousin is named Jon.", corrected_at=AFTER)
    decided = decide_corrections([named, elsewhere, corrected], old="Jon", new="Joan", when=SAID)
    assert decided == [(named.id, "The user's brother is named Joan.")]


# --- facts of the batch an ending, a dispute or a correction names ------------------------------


def test_a_correction_restates_the_batchs_facts_but_not_those_ended_or_waiting() -> None:
    named = in_batch(content="The user's brother is named Jon.")
    ended = in_batch(content="The user's friend is named Jon.", ended=True)
    waiting = in_batch(content="The user's cousin is named Jon.", review=True)
    decided = corrected_in_batch([named, ended, waiting], old="Jon", new="Joan")
    assert decided == [(named.id, "The user's brother is named Joan.")]


def test_an_ending_of_a_slot_ends_the_batchs_facts_of_that_slot() -> None:
    home = in_batch(slot=HOME, content="The user lives in Leeds.")
    work = in_batch(slot=WORK, content="The user works in Leeds.")
    waiting = in_batch(slot=HOME, content="The user lives in York.", review=True)
    assert ended_in_batch([home, work, waiting], Scope(slot=HOME)) == [home.id]


def test_an_ending_of_a_group_narrowed_by_value() -> None:
    peanuts = in_batch(group="allergy", content="The user is allergic to peanuts.")
    shellfish = in_batch(group="allergy", content="The user is allergic to shellfish.")
    other = in_batch(group="diet", content="The user avoids peanuts.")
    scope = Scope(group="allergy", value="peanuts")
    assert ended_in_batch([peanuts, shellfish, other], scope) == [peanuts.id]


def test_an_ending_without_slot_or_group_spares_another_persons_facts() -> None:
    own = in_batch(content="The user is allergic to peanuts.")
    sisters = in_batch(content="The user's sister is allergic to peanuts.", of_another_person=True)
    ended = in_batch(content="The user eats peanuts.", ended=True)
    assert ended_in_batch([own, sisters, ended], Scope(value="peanuts")) == [own.id]


def test_a_dispute_sends_the_batchs_facts_of_its_group_to_review() -> None:
    allergy = in_batch(group="allergy", content="The user is allergic to peanuts.")
    waiting = in_batch(group="allergy", content="The user is allergic to cats.", review=True)
    diet = in_batch(group="diet", content="The user avoids peanuts.")
    ended = in_batch(group="allergy", ended=True)
    assert disputed_in_batch([allergy, waiting, diet, ended], Scope(group="allergy")) == [
        allergy.id,
        waiting.id,
    ]


def test_a_dispute_without_a_group_names_the_users_own_facts_of_its_value() -> None:
    own = in_batch(content="The user lives in Leeds.")
    brothers = in_batch(content="The user's brother lives in Leeds.", of_another_person=True)
    elsewhere = in_batch(content="The user works in York.")
    assert disputed_in_batch([own, brothers, elsewhere], Scope(value="Leeds")) == [own.id]


def test_what_was_last_said_is_the_latest_earlier_turn_that_gave_a_fact() -> None:
    first = in_batch(message="m1")
    second_a, second_b = in_batch(message="m2"), in_batch(message="m2")
    facts = [first, second_a, second_b]
    assert last_said_in_batch(facts, ["m1", "m2", "m3"]) == [second_a.id, second_b.id]
    assert last_said_in_batch(facts, ["m1"]) == [first.id]
    assert last_said_in_batch(facts, ["m0", "m3"]) == []


# --- small rules --------------------------------------------------------------------------------


def test_corrected_since_compares_with_the_turns_time() -> None:
    assert corrected_since(AFTER, SAID)
    assert corrected_since(SAID, SAID)
    assert not corrected_since(BEFORE, SAID)
    assert not corrected_since(None, SAID)
    assert corrected_since(BEFORE, None)


def test_token_overlap_is_jaccard_and_zero_without_tokens() -> None:
    assert token_overlap([1, 2, 3], [2, 3, 4]) == 0.5
    assert token_overlap([], [1]) == 0.0


tokens = st.lists(st.integers(min_value=0, max_value=30), max_size=8)


@settings(max_examples=80, deadline=None)
@given(tokens, tokens, st.sampled_from(["", HOME]))
def test_two_facts_that_each_say_no_more_than_the_other_hold_the_same_tokens(
    a: list[int], b: list[int], slot: str
) -> None:
    assert says_no_more(a, a, slot=slot)
    if says_no_more(a, b, slot=slot) and says_no_more(b, a, slot=slot):
        assert set(a) == set(b)


@settings(max_examples=80, deadline=None)
@given(
    tokens,
    st.lists(st.tuples(tokens, st.floats(0.0, 1.0), st.sampled_from(["", HOME, WORK]))),
    st.lists(st.tuples(tokens, st.sampled_from(["", HOME]), st.booleans(), st.booleans())),
    st.booleans(),
    st.sampled_from(["", HOME]),
)
def test_a_fact_supersedes_only_facts_of_its_own_slot_and_never_while_uncertain(
    mine: list[int],
    nears: list[tuple[list[int], float, str]],
    batch: list[tuple[list[int], str, bool, bool]],
    review: bool,
    slot: str,
) -> None:
    stored = ids(2)
    decision = decide(
        new_fact(mine, slot=slot, review=review),
        [near(t, similarity=s, slot=n) for t, s, n in sorted(nears, key=lambda x: -x[1])],
        [in_batch(t, slot=s, ended=e, review=r, vector=NORTH) for t, s, e, r in batch],
        [SlotFact(i) for i in stored],
    )
    if review:
        assert decision.outcome not in (Outcome.ADD, Outcome.MERGE)
    if decision.supersedes:
        assert slot
        assert decision.outcome == Outcome.ADD
        assert set(stored) <= set(decision.supersedes)


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_the_decisions_import_without_django() -> None:
    result = run_python(
        "import sys, apps.pipeline.decisions; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'rest_framework'}))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
