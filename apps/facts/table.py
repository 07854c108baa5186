"""Rule tables and the small engine that reads them (pure: no Django, no database).

A language's rules are rows of a table: a pattern, the slot its facts fill or end, the
builder that turns a match into facts, and a note of what the rule is for. A table is read
in order and the first rule whose pattern matches and whose builder returns facts wins; a
builder returns None to pass the clause on to the next rule (a guard on the clause or on
the turn's carried state failed), and an empty list to stop the walk with no fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from apps.facts.grammar import Fact

LANGUAGES = frozenset({"en", "zh"})

# The slot heads a rule may fill or end ("allergy" for "allergy:peanut", "home" for
# "sister|home"); "correction" for a rule that replaces a value said before, "any" for one
# that ends whatever fact speaks of its value.
SLOTS = frozenset(
    {
        "activity",
        "age",
        "allergy",
        "any",
        "condition",
        "correction",
        "diet",
        "employer",
        "event",
        "family",
        "habit",
        "hobby",
        "home",
        "job",
        "language",
        "marital",
        "medication",
        "name",
        "nickname",
        "opinion",
        "origin",
        "pet",
        "plan",
        "study",
        "workplace",
    }
)

# What a builder reads besides the match: the clause, whom it is about, the turn's state.
Context = TypeVar("Context")


@dataclass(frozen=True)
class Rule(Generic[Context]):
    """One row of a rule table."""

    name: str  # unique within the language
    pattern: re.Pattern[str]
    slot: str  # one of SLOTS
    builder: Callable[[re.Match[str], Context], list[Fact] | None]
    language: str  # one of LANGUAGES
    note: str  # what the rule is for, in a sentence
    anywhere: bool = False  # the pattern may match anywhere in the clause, not only at its start
    kind: str = ""  # the kind of fact, where several rules share one (negation reads it)

    def find(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.anywhere else self.pattern.match(text)


@dataclass(frozen=True)
class Found(Generic[Context]):
    """The rule that gave a clause's facts, its match and the facts."""

    rule: Rule[Context]
    match: re.Match[str]
    facts: list[Fact]


def first_found(
    rules: Sequence[Rule[Context]], text: str, context: Context
) -> Found[Context] | None:
    """The first rule of `rules`, in order, whose pattern matches `text` and whose builder
    returns facts (an empty list too), with its match and facts; None when none does."""
    for rule in rules:
        match = rule.find(text)
        if match is None:
            continue
        facts = rule.builder(match, context)
        if facts is not None:
            return Found(rule, match, facts)
    return None


def first_facts(rules: Sequence[Rule[Context]], text: str, context: Context) -> list[Fact] | None:
    """The facts of the first rule of `rules` that gives any (`first_found`), or None."""
    found = first_found(rules, text, context)
    return None if found is None else found.facts
