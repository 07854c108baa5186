"""Atomic facts from a user turn (pure: no Django, no database).

A turn is cut into clauses ("I live in Hangzhou and I work as a pastry chef" is two), each
clause into who it is about (the user, or a person of theirs: "my sister") and what it says
of them. What it says fills one *slot*, a thing that holds one value at a time (home, job,
employer, diet, name, marital status, a favourite) or one value among several (an allergy,
a pet, a plan, a condition, an opinion: the slot then carries the value, "allergy:peanut").
A later fact supersedes only the slot it fills; the rest stay current.

Negations and changes *end* facts: "I'm not allergic to peanuts" ends the peanut allergy,
"I quit nursing" ends the current facts that speak of nursing, "I don't eat meat anymore"
replaces the diet. A correction's new value ("..., it's shellfish") takes the negated
clause's place. Time words ("last week", "next month", "下个月") leave the sentence and become
structured time: when it happened, from when it holds, when a plan lapses.

Statements are clean third-person sentences ("The user lives in Shanghai.", "用户住在上海。").
The rules are general grammar, small closed word classes (relations, pets, diets) and closed
vocabularies for the sensitive slots (drugs, allergens, conditions, occupations), not
phrases of any particular conversation.

This module reads a turn (`facts_of`); the package holds the rest: `table` (a rule table's
rows and the engine that reads them in order), `english` (an English clause, read by the
tables of `english_whole` and `english_predicates`, with `english_builders` and
`english_words`), `chinese` (a Chinese clause, read by the tables of `chinese_rules`, with
`chinese_builders` and `chinese_words`), `changes`, `time_words`, `grammar` (slots, endings,
word classes), `vocabulary` and `doubt` (what a turn puts in question).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from apps.facts import vocabulary
from apps.facts.changes import change_facts
from apps.facts.chinese import ZH_CLAUSES, chinese_clause
from apps.facts.doubt import HEALTH_GROUPS, asserted_in_doubt, disputes_of
from apps.facts.english import (
    CLAUSES,
    NAME,
    SELF,
    ClauseState,
    Who,
    as_sentence,
    bare_name,
    english_clause,
    expand_contractions,
)
from apps.facts.grammar import Ending, Fact, slot_group, speaks_of, stems, substitute, value_key

__all__ = [
    "Ending",
    "Fact",
    "facts_of",
    "facts_remembered",
    "normal_slot",
    "slot_group",
    "speaks_of",
    "substitute",
]

# --- entry ----------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u9fff]")


# The facts of the texts already read in the unit of work that opened `facts_remembered`,
# by (text, moment); None outside one.
_remembered: ContextVar[dict[tuple[str, datetime], list[Fact]] | None] = ContextVar(
    "facts_remembered", default=None
)


@contextmanager
def facts_remembered() -> Iterator[None]:
    """Within this block `facts_of` reads each (text, moment) once: an ingest job's
    extraction and then its session's offline summary read the same turns. What it
    remembers is plaintext, so it lives only as long as the block (one job), never in the
    process."""
    token = _remembered.set({})
    try:
        yield
    finally:
        _remembered.reset(token)


def facts_of(text: str, now: datetime) -> list[Fact]:
    """The atomic facts a user turn states, in order (a new list each call; the facts are
    shared within `facts_remembered`, and read, not changed, by their callers)."""
    remembered = _remembered.get()
    if remembered is None:
        return _facts_of(text, now)
    key = (text, now)
    if key not in remembered:
        remembered[key] = _facts_of(text, now)
    return list(remembered[key])


def _facts_of(text: str, now: datetime) -> list[Fact]:
    """The facts found, each health fact kept only if its value is a known drug, allergen or
    condition (`vocabulary`): a value that fits none is no fact, and ends nothing (the turn
    stays an episodic memory, which recall still finds). A known value the clause rules
    missed still stops or starts where the words around it say so (`changes`); a change
    nothing resolves to a new value disputes the facts it touches (`doubt`)."""
    facts = []
    for fact in _found(text, now):
        if not _trusted(fact) or (
            fact.statement and asserted_in_doubt(fact.statement, fact.group, text)
        ):
            continue
        fact.ends = [ending for ending in fact.ends if _trusted_ending(ending)]
        if fact.statement or fact.ends or fact.replace or fact.disputes:
            facts.append(fact)
    facts.extend(change_facts(text, _resolved(facts)))
    disputes = disputes_of(text, _resolved(facts))
    if disputes:
        facts.append(Fact("", "", "health", 0.9, 0.9, disputes=disputes))
    return facts


def _resolved(facts: list[Fact]) -> Callable[[str, str], bool]:
    """What the turn's rules set or ended, as a test of (health group, value): a value is
    resolved when a fact or an ending of its group speaks of it, or an ending takes the whole
    group or slot; a whole group, when any fact or ending of it was read."""
    said: dict[str, list[str]] = {}
    whole: set[str] = set()
    for fact in facts:
        if fact.statement:
            said.setdefault(fact.group, []).append(fact.statement)
        for ending in fact.ends:
            if ending.slot or ending.group:
                group = ending.group or slot_group(ending.slot)
                said.setdefault(group, []).append(ending.value or ending.slot)
                if not ending.value:
                    whole.add(group)
            elif ending.value:  # "I'm off metformin now": whichever group the value names
                for group in HEALTH_GROUPS:
                    if vocabulary.CHECKS[group](ending.value):
                        said.setdefault(group, []).append(ending.value)

    def resolved(group: str, value: str) -> bool:
        if not value:
            return group in said
        return group in whole or any(
            speaks_of(text, value) or value in text for text in said.get(group, [])
        )

    return resolved


def _trusted_ending(ending: Ending) -> bool:
    """An ending of a health slot ends facts of a known value only ("I'm off to bake" ends no
    medication "to"); an ending of a whole group, or of another slot, stands."""
    head = (ending.group or slot_group(ending.slot)).rpartition("|")[2]
    check = vocabulary.CHECKS.get(head)
    if check is None:
        return True
    if ending.value:
        return check(ending.value)
    key = ending.slot.partition(":")[2]  # a stemmed key ("sertralin"): a word at least
    return not key or bool(stems(key))


def _trusted(fact: Fact) -> bool:
    if _FIRST_PERSON.search(fact.statement):
        return False  # "The user's doctor took me off ...": whose words is not clear
    head = slot_group(fact.slot).rpartition("|")[2]
    if head == "home" and _ZH_NOT_A_HOME.search(fact.statement):
        return False
    if _ZH_NOT_OWN.search(fact.statement):
        return False  # "用户患有爸有糖尿病": a clause about somebody else, misread
    check = vocabulary.CHECKS.get(head)
    return not fact.statement or check is None or check(fact.statement)


# A third-person statement that still speaks in the first person was cut from a clause the
# rules did not understand.
_FIRST_PERSON = re.compile(r"\b(?:me|my|myself|mine)\b|\bI\b")

# A Chinese health statement whose value holds a relation or a verb of its own.
# (他 in a drug's name is no "he": 他汀, 司他, 他韦.)
_ZH_NOT_OWN = re.compile(
    r"^用户(?:患有|在服用|对)(?:[爸妈哥姐弟妹]|[^。]*(?:[有是我她]|(?<!司)他(?![汀韦])))"
)

# Inside a thing, or a night's lodging, is not where one lives ("住在购物车里", "住在一家民宿里").
_ZH_NOT_A_HOME = re.compile(r"(?:里|上)。$|酒店|宾馆|民宿|旅馆|青旅|客栈")


def _found(text: str, now: datetime) -> list[Fact]:
    carry = ClauseState()
    facts: list[Fact] = []
    if _CJK.search(text):
        who = Who("用户", "")
        for part in ZH_CLAUSES.split(text):
            if part.strip():
                found, who = chinese_clause(part, carry, now, who)
                facts.extend(found)
        return facts
    text = expand_contractions(text)
    asides = re.findall(r"\(([^)]{3,120})\)", text)  # "(I'm a forklift operator at ...)"
    who = SELF
    for sentence in [*re.split(r"(?<=[.!?])\s+|\n+", text), *asides]:
        for part in CLAUSES.split(sentence):
            if part and part.strip():
                found, who = english_clause(part, carry, now, who)
                facts.extend(found)
        who = SELF
    renamed = re.search(
        r"\b(?:surname|last name|name)\b[^.!?]*?,\s*(?:so\s+)?it is\s+" + NAME + r"(?:\s+now)?",
        text,
        re.I,
    )
    if renamed and not any(f.slot == "name" for f in facts):
        name = renamed.group("name")
        facts.append(Fact(as_sentence(f"The user's name is {name}"), "name", "fact", 0.9, 0.9))
        carry.new_value = ""
    if carry.new_value:
        facts.extend(_attach_new_value(carry.new_value, facts))
    if any(f.slot == "employer" and f.statement for f in facts):
        # "left Brightwave, now at Northfield, same role": a new employer, not a new job
        for fact in facts:
            fact.ends = [e for e in fact.ends if e.slot != "job"]
    called = re.search(
        r"\b(?:(?:everyone|everybody|people|friends|my friends|they|most people)\s+calls?"
        r"|(?:please|pls|plz|just|you can|u can)\s+call)\s+me\s+" + NAME,
        text,
    )
    if called and not any(f.slot == "nickname" for f in facts):
        nickname = called.group("name")
        if any(f.slot == "name" and nickname not in f.statement for f in facts):
            facts.append(
                Fact(as_sentence(f"The user goes by {nickname}"), "nickname", "fact", 0.8, 0.7)
            )
    names = [f for f in facts if f.slot == "name"]
    if len(names) > 1:  # "My name is Margaret ... everyone calls me Peggy": a nickname
        for fact in names[1:]:
            nickname = fact.statement.removeprefix("The user's name is ").rstrip(".")
            fact.statement, fact.slot = as_sentence(f"The user goes by {nickname}"), "nickname"
    return facts


def _attach_new_value(value: str, facts: list[Fact]) -> list[Fact]:
    """Where "it's actually X" belongs: to the allergy or medication the turn ends, else, if
    X is a name, to the name."""
    groups = {e.group or slot_group(e.slot) for f in facts for e in f.ends}
    values = [v for v in re.split(r"\s*(?:,|\band\b|&)\s*", value) if v]
    for head, template in (
        ("allergy", "The user is allergic to {}"),
        ("medication", "The user takes {}"),
        ("condition", "The user has {}"),
    ):
        if head in groups:
            return [
                Fact(as_sentence(template.format(v)), f"{head}:{value_key(v)}", "health", 0.9, 0.9)
                for v in values
            ]
    if bare_name(value.split(",")[0].strip()):
        name = value.split(",")[0].strip()
        return [Fact(as_sentence(f"The user's name is {name}"), "name", "fact", 0.9, 0.9)]
    return []


def normal_slot(slot: str) -> str:
    """A slot named elsewhere (an LLM's "Allergy: Peanuts") in this module's form
    ("allergy:peanut"), so both extractors' facts meet in one slot."""
    person, _, rest = slot.strip().lower().rpartition("|")
    head, sep, value = rest.partition(":")
    head = re.sub(r"\s+", " ", head.strip())
    normal = f"{head}:{value_key(value)}" if sep and value.strip() else head
    return f"{person.strip()}|{normal}" if person.strip() else normal
