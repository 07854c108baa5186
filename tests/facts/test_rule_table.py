"""Each kind of the English predicate rules (apps/facts/english_predicates.py: RULES, a pattern
and the builder of its kind of fact) with what it must extract and, for the kinds that fill a
sensitive slot, a near miss it must not; and the shape every rule table keeps (a note, a known
slot and language, a compiled pattern, a unique name). No database."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from apps.facts.chinese_rules import ZH_REPLIES, ZH_RULES
from apps.facts.english_predicates import RULES
from apps.facts.english_whole import WHOLE_CLAUSE
from apps.facts.rules import facts_of, slot_group
from apps.facts.table import LANGUAGES, SLOTS, Rule

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)

# kind: (what is said, the statements it gives; "" is a fact that only ends others, with the
# slots or groups it ends)
MUST = {
    "allergy": ("I'm allergic to shellfish.", ["The user is allergic to shellfish."]),
    "diet": ("I went vegan last year.", ["The user is vegan."]),
    "home": ("I live in Leeds.", ["The user lives in Leeds."]),
    "employer-after-leaving": (
        "I left Spotify. I'm at Shopify now.",
        ["ends employer", "The user works at Shopify."],
    ),
    "medication": ("I take lisinopril every morning.", ["The user takes lisinopril."]),
    "medication-stop": ("I stopped taking sertraline.", ["ends medication:sertralin"]),
    "pet-named": (
        "We got a kitten and named her Miso.",
        ["The user has a kitten.", "The user has a kitten named Miso."],
    ),
    "marital": ("I got married to Sam in June.", ["The user is married to Sam."]),
    "booked": ("I booked flights to Lisbon.", ["The user booked flights to Lisbon."]),
    "cancel": ("I cancelled my trip to Rome.", ["ends plan"]),
    "gone-off": ("I've gone off coffee.", ["ends opinion"]),
    "person": ("I'm a cat person.", ["The user is a cat person."]),
    "age": ("I'm 34.", ["The user is 34 years old."]),
    "name": ("I go by Liz.", ["The user's name is Liz."]),
    "fired": ("I got laid off last week.", ["ends job"]),
    "pet-gone": ("I don't have the dog anymore.", ["ends pet"]),
    "diet-not": ("I don't eat meat anymore.", ["The user does not eat meat."]),
    "diet-stop": ("I cut out dairy.", ["The user does not eat dairy."]),
    "origin": ("I'm originally from Porto.", ["The user is from Porto."]),
    "job": ("I work as a paramedic.", ["The user works as a paramedic."]),
    "employer": ("I work at Siemens.", ["The user works at Siemens."]),
    "retired": ("I'm retired now.", ["The user is retired."]),
    "come-around": ("I'm obsessed with pickleball.", ["The user likes pickleball."]),
    "switched-to": ("I switched to oat milk.", ["The user switched to oat milk."]),
    "plan-to": ("Flying to Tokyo tomorrow!", ["The user is flying to Tokyo."]),
    "quit": ("I quit my job as a barista.", ["ends job"]),
    "no-longer": ("I'm no longer a teacher.", ["ends teacher"]),
    "pet": ("I have a golden retriever.", ["The user has a retriever."]),
    "family": ("I have two sisters.", ["The user has two sisters."]),
    "condition": ("I have asthma.", ["The user has asthma."]),
    "condition-adj": ("I'm diabetic.", ["The user is diabetic."]),
    "medication-for": (
        "I take metformin for my diabetes.",
        ["The user takes metformin.", "The user has diabetes."],
    ),
    "opinion": ("I love jazz.", ["The user loves jazz."]),
    "plan": (
        "I'm planning to run a marathon in October.",
        ["The user is going to run a marathon."],
    ),
    "plan-progressive": ("I'm flying to Oslo on Friday.", ["The user is flying to Oslo."]),
    "diet-eat": ("I started eating fish again.", ["The user eats fish."]),
    "manage": ("I run a small bakery.", ["The user runs a small bakery."]),
    "admitted": ("I got into Edinburgh.", ["The user got into Edinburgh."]),
    "event": ("I ran the Berlin marathon.", ["The user ran the Berlin marathon."]),
    "language": ("I speak Portuguese.", ["The user speaks Portuguese."]),
    "study": ("I study law.", ["The user studies law."]),
    "hobby": ("I play the cello.", ["The user plays the cello."]),
    "activity": ("I'm learning to knit.", ["The user is learning to knit."]),
    "name-bare": ("Hi, I'm Priya, nice to meet you.", ["The user's name is Priya."]),
    "identity": ("I'm a nurse.", ["The user works as a nurse."]),
}

# Near misses of the kinds that fill a sensitive slot: the same shape, no such fact.
MUST_NOT = {
    "allergy": "I'm allergic to Mondays.",
    "home": "I'm in a meeting right now.",
    "employer-after-leaving": "I'm at Home Depot looking for paint.",
    "medication": "I take notes every morning.",
    "medication-stop": "I stopped taking the bus.",
    "employer": "I work with some amazing volunteers.",
    "job": "I work as hard as I can.",
    "identity": "I'm a professional overthinker.",
    "condition": "I have a cold brew every morning.",
    "condition-adj": "I'm pregnant with ideas.",
    "medication-for": "I take the bus for my commute.",
}
SENSITIVE = {"medication", "allergy", "condition", "job", "employer", "home"}


def said(text: str) -> list[str]:
    out = []
    for fact in facts_of(text, NOW):
        if fact.statement:
            out.append(fact.statement)
        for ending in fact.ends:
            out.append(f"ends {ending.slot or ending.group or ending.value}")
    return out


def test_every_kind_of_the_table_has_a_case() -> None:
    kinds = {rule.kind for rule in RULES}
    assert kinds == set(MUST)
    assert set(MUST_NOT) <= kinds


@pytest.mark.parametrize("kind", sorted(MUST))
def test_each_rule_extracts_what_it_must(kind: str) -> None:
    text, expected = MUST[kind]
    found = said(text)
    for item in expected:
        assert item in found, (text, found)


@pytest.mark.parametrize("kind", sorted(MUST_NOT))
def test_each_sensitive_rule_skips_its_near_miss(kind: str) -> None:
    text = MUST_NOT[kind]
    facts = [f for f in facts_of(text, NOW) if f.statement and "|" not in f.slot]
    assert [f.statement for f in facts if slot_group(f.slot) in SENSITIVE] == [], text


TABLES: dict[str, tuple[Rule[Any], ...]] = {
    "english whole clause": WHOLE_CLAUSE,
    "english predicates": RULES,
    "chinese rules": ZH_RULES,
    "chinese replies": ZH_REPLIES,
}
EVERY_RULE = [rule for table in TABLES.values() for rule in table]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_rule_is_described_and_compiled(table: str) -> None:
    for rule in TABLES[table]:
        assert rule.note.strip().endswith("."), rule.name
        assert rule.slot in SLOTS, rule.name
        assert rule.language in LANGUAGES, rule.name
        assert isinstance(rule.pattern, re.Pattern), rule.name
        assert callable(rule.builder), rule.name


def test_rule_names_are_unique() -> None:
    names = [rule.name for rule in EVERY_RULE]
    assert len(names) == len(set(names))


def test_each_table_holds_one_language() -> None:
    assert {rule.language for rule in WHOLE_CLAUSE} | {rule.language for rule in RULES} == {"en"}
    assert {rule.language for rule in ZH_RULES} | {rule.language for rule in ZH_REPLIES} == {"zh"}


def test_every_predicate_rule_reads_from_the_start_of_the_predicate() -> None:
    assert not any(rule.anywhere for rule in RULES)
    assert all(rule.pattern.pattern.startswith("^") for rule in RULES)
