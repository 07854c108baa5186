"""Doubt (apps/facts/doubt.py): a change the rules cannot resolve to a new value disputes
the facts it touches; a change they resolve, and ordinary talk, dispute nothing. No
database."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.facts.doubt import Dispute, disputes_of
from apps.facts.rules import facts_of

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def disputes(text: str) -> list[Dispute]:
    return [d for fact in facts_of(text, NOW) for d in fact.disputes]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My doctor took me off the metformin last week.", [Dispute("medication", "metformin")]),
        ("My doctor took me off my meds.", [Dispute("medication")]),
        ("My GP says I don't need the inhaler anymore.", [Dispute("medication")]),
        ("The tests came back negative, so no celiac.", [Dispute("condition", "celiac")]),
        ("Turns out the asthma was a misdiagnosis.", [Dispute("condition", "asthma")]),
        ("My allergist thinks the allergy isn't real.", [Dispute("allergy")]),
        ("I'm being weaned off sertraline.", [Dispute("medication", "sertraline")]),
        ("That's my brother, not me.", [Dispute(last_said=True)]),
        ("Not me, it's my sister.", [Dispute(last_said=True)]),
        ("I meant my wife.", [Dispute(last_said=True)]),
        ("医生让我停药了。", [Dispute("medication")]),
        ("医生说二甲双胍不用再吃了。", [Dispute("medication", "二甲双胍")]),
        ("检查结果是阴性，不是哮喘。", [Dispute("condition", "哮喘")]),
        ("那是我哥哥，不是我。", [Dispute(last_said=True)]),
    ],
)
def test_an_unresolved_change_disputes_what_it_touches(text: str, expected: list[Dispute]) -> None:
    assert disputes(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # Resolved by the rules: the turn says what holds (an end, or a new value).
        "I'm no longer allergic to peanuts.",
        "My allergist says I've outgrown the peanut allergy.",
        "Actually, I'm not allergic to peanuts, it's shellfish.",
        "我对花生不过敏了。",
        # A weak cue without a negation: nothing changes.
        "My doctor says my asthma is under control.",
        "My doctor said to take the metformin with food.",
        "医生说要按时吃药。",
        # No health topic, or another person's doctor.
        "Turns out the restaurant was closed, not a big deal.",
        "I took my kids off the school bus route.",
        "That's my brother's car.",
    ],
)
def test_a_resolved_change_or_ordinary_talk_disputes_nothing(text: str) -> None:
    assert disputes(text) == []


def test_what_the_rules_resolved_is_not_disputed() -> None:
    text = "My doctor took me off the metformin and the insulin."
    both = [Dispute("medication", "metformin"), Dispute("medication", "insulin")]
    assert disputes_of(text, lambda group, value: False) == both
    assert disputes_of(text, lambda group, value: value == "insulin") == both[:1]
    assert disputes_of(text, lambda group, value: group == "medication") == []


def test_a_new_value_of_another_clause_leaves_the_doubt_standing() -> None:
    text = "I take metformin but my doctor took me off the insulin."
    facts = facts_of(text, NOW)
    assert [f.statement for f in facts if f.statement] == ["The user takes metformin."]
    assert disputes(text) == [Dispute("medication", "insulin")]


def test_a_fact_the_turn_doubts_is_not_read_as_stated() -> None:
    assert [f.statement for f in facts_of("医生说我对花生过敏可能是误诊。", NOW)] == [""]
    assert disputes("医生说我对花生过敏可能是误诊。") == [Dispute("allergy", "花生")]
