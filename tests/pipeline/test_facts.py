"""The offline fact extractor (apps/pipeline/facts.py): atomic facts, clean statements,
structured time, negations, other people (pure: no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.facts.rules import Ending, facts_of, normal_slot, slot_group, speaks_of
from apps.pipeline.extraction import OfflineExtractor, Turn

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def statements(text: str) -> list[str]:
    return [f.statement for f in facts_of(text, NOW) if f.statement]


def test_a_compound_turn_is_cut_into_one_fact_per_slot() -> None:
    facts = facts_of("I live in Hangzhou and I work as a pastry chef, and I have a cat.", NOW)
    assert [(f.slot, f.statement) for f in facts] == [
        ("home", "The user lives in Hangzhou."),
        ("job", "The user works as a pastry chef."),
        ("pet:cat", "The user has a cat."),
    ]


def test_time_words_leave_the_sentence_and_become_structured_time() -> None:
    (moved,) = facts_of("I moved to Shanghai last week.", NOW)
    assert moved.statement == "The user lives in Shanghai."
    assert moved.valid_from is not None
    assert moved.valid_from.date().isoformat() == "2026-11-24"
    (plan,) = facts_of("Next month I'm going to Kyoto for a baking course.", NOW)
    assert plan.statement == "The user is going to Kyoto for a baking course."
    assert plan.category == "plan"
    assert plan.occurred_at is not None
    assert plan.occurred_at.date().isoformat() == "2027-01-01"
    assert plan.expires_at is not None
    assert plan.expires_at.date().isoformat() == "2027-02-01"  # after the month it names
    (zh,) = facts_of("下个月我要去京都参加烘焙课程。", NOW)
    assert "下个月" not in zh.statement
    assert zh.expires_at is not None


def test_a_negation_ends_the_fact_and_a_correction_takes_its_place() -> None:
    negation, correction = facts_of("Actually, I'm not allergic to peanuts, it's shellfish.", NOW)
    assert negation.statement == ""
    assert negation.ends == [Ending(group="allergy", value="peanuts")]
    assert correction.statement == "The user is allergic to shellfish."
    assert correction.slot == "allergy:shellfish"


@pytest.mark.parametrize(
    ("text", "ending"),
    [
        ("I quit nursing.", Ending(value="nursing")),
        ("I'm no longer a teacher.", Ending(value="teacher")),
        ("I don't have asthma anymore.", Ending(slot="condition:asthma")),
        ("I stopped taking metformin.", Ending(slot="medication:metformin")),
        ("I cancelled my trip to Lisbon.", Ending(group="plan", value="Lisbon")),
        ("I got fired.", Ending(slot="job")),
    ],
)
def test_changes_phrased_as_changes_end_facts(text: str, ending: Ending) -> None:
    ends = [e for f in facts_of(text, NOW) for e in f.ends]
    assert ending in ends


def test_a_bare_negation_of_a_diet_replaces_the_diet() -> None:
    (fact,) = facts_of("I don't eat meat anymore.", NOW)
    assert fact.slot == "diet"
    assert fact.statement == "The user does not eat meat."


def test_other_peoples_facts_are_theirs_never_the_users() -> None:
    facts = facts_of("My sister lives in Paris and she works as a nurse.", NOW)
    assert [(f.slot, f.statement) for f in facts] == [
        ("sister|home", "The user's sister lives in Paris."),
        ("sister|job", "The user's sister works as a nurse."),
    ]
    (zh,) = facts_of("我姐姐住在巴黎。", NOW)
    assert zh.slot == "姐姐|home"
    assert zh.statement == "用户的姐姐住在巴黎。"


def test_names_pets_and_hedges() -> None:
    assert statements("Hi, I'm Mei Lin.") == ["The user's name is Mei Lin."]
    assert statements("I'm Italian.") == []  # a nationality, not a name
    assert statements("I have a dog named Max.") == ["The user has a dog named Max."]
    (hedged,) = facts_of("I'm probably allergic to kiwi.", NOW)
    assert hedged.statement == "The user is allergic to kiwi."
    assert hedged.confidence < 0.6  # waits in the review queue
    (sure,) = facts_of("I'm allergic to kiwi.", NOW)
    assert sure.confidence >= 0.6


def test_questions_and_small_talk_state_nothing() -> None:
    assert facts_of("Do you know where I live?", NOW) == []
    assert facts_of("Thanks, that was helpful!", NOW) == []


def test_slots_of_both_extractors_meet() -> None:
    assert normal_slot("Allergy: Peanuts") == "allergy:peanut"
    assert normal_slot("Sister|Home") == "sister|home"
    assert slot_group("sister|allergy:cat") == "sister|allergy"
    assert speaks_of("The user works as a nurse.", "nursing")
    assert not speaks_of("The user works as a nurse.", "smoking")


def test_a_message_sent_mid_sentence_is_read_with_the_next() -> None:
    turns = [
        Turn("user", "ok so i live in", 0),
        Turn("user", "vancouver lol hit enter too early", 1),  # alone, it states nothing
        Turn("user", "I live in", 2),
        Turn("assistant", "Where?", 3),
        Turn("user", "glasgow", 4),  # an answer after the assistant: read alone
    ]
    facts = [c.content for c in OfflineExtractor().extract(turns) if c.kind == "semantic"]
    assert facts == ["The user lives in Vancouver."]


def test_a_message_that_completes_the_one_before_is_read_with_it() -> None:
    turns = [
        Turn("user", "allergist ran a full panel and shellfish came back totally negative", 0),
        Turn("user", "its PEANUTS. she thinks the shrimp was just food poisoning", 1),
    ]
    facts = [c for c in OfflineExtractor().extract(turns) if c.kind == "semantic"]
    assert [c.content for c in facts if c.content] == ["The user is allergic to peanuts."]
    assert Ending(group="allergy", value="shellfish") in [e for c in facts for e in c.ends]
