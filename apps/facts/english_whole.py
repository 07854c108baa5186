"""The English whole-clause rules: clauses whose subject is the thing itself ("it's almonds
I react to", "walnuts are fine", "Pickle passed away", "swimming is my thing now"), read
before a clause's subject is looked for (pure: no Django, no database).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from apps.facts.english_words import (
    NAME,
    NOT_A_THING,
    as_sentence,
    clean_value,
    job_fact,
    relation_words,
)
from apps.facts.grammar import CONDITION, DIETS, PETS, SELF, ClauseState, Ending, Fact, value_key
from apps.facts.table import Rule, first_facts


@dataclass(frozen=True)
class Said:
    """What a whole-clause builder reads besides its match."""

    correction: bool  # the clause corrects an earlier one
    carry: ClauseState  # the turn's state, carried between its clauses

    @property
    def conf(self) -> float:
        return 0.9 if self.correction else 0.8


def whole_clause(clause: str, correction: bool, carry: ClauseState) -> list[Fact] | None:
    """The facts of the first whole-clause rule (WHOLE_CLAUSE) that gives any, or None."""
    return first_facts(WHOLE_CLAUSE, clause, Said(correction, carry))


def _allergy_it_is(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"allergy:{value_key(value)}"
    return [Fact(as_sentence(f"The user is allergic to {value}"), slot, "health", said.conf, 0.95)]


def _fine_for_me(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = re.sub(r"^(?:the\s+)?(?:other|all other|any other)\s+", "", m.group("v"), flags=re.I)
    if value.lower() in NOT_A_THING:
        return None
    return [Fact("", "", "health", said.conf, 0.9, ends=[Ending(group="allergy", value=value)])]


def _pet_died(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = m.group("v") or m.group("v2")
    if value.lower() in NOT_A_THING or value.lower() in relation_words():
        return None
    return [Fact("", "", "fact", said.conf, 0.6, ends=[Ending(group="pet", value=value)])]


def _renamed(m: re.Match[str], said: Said) -> list[Fact] | None:
    carry = said.carry
    carry.species = (m.group("v") or carry.species or "pet").lower()
    carry.renaming = True
    return [Fact("", "", "fact", said.conf, 0.6, ends=[Ending(group="pet", value=carry.species)])]


def _renamed_now_called(m: re.Match[str], said: Said) -> list[Fact] | None:
    if not said.carry.renaming:
        return None
    name, species = m.group("name"), said.carry.species or "pet"
    text = f"The user has a {species} named {name}"
    return [Fact(as_sentence(text), f"pet:{value_key(name)}", "fact", said.conf, 0.7)]


def _current_pet(m: re.Match[str], said: Said) -> list[Fact] | None:
    species, name = m.group("species").lower(), m.group("name")
    ends = [Ending(group="pet", value=species)]
    text = f"The user has a {species} named {name}"
    return [Fact(as_sentence(text), f"pet:{value_key(name)}", "fact", said.conf, 0.7, ends=ends)]


def _my_allergy_is(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"allergy:{value_key(value)}"
    ends = [Ending(slot=f"allergy:{value_key(m.group('old'))}")] if m.group("old") else []
    text = f"The user is allergic to {value}"
    return [Fact(as_sentence(text), slot, "health", said.conf, 0.95, ends=ends)]


def _diet_alone(m: re.Match[str], said: Said) -> list[Fact] | None:
    text = f"The user is {m.group('v').lower()}"
    return [Fact(as_sentence(text), "diet", "fact", said.conf, 0.8)]


def _pet_name_is(m: re.Match[str], said: Said) -> list[Fact] | None:
    species = said.carry.species or "pet"
    name = m.group("name")
    text = f"The user has a {species} named {name}"
    return [Fact(as_sentence(text), f"pet:{value_key(name)}", "fact", said.conf, 0.7)]


def _first_week_at(m: re.Match[str], said: Said) -> list[Fact] | None:
    text = f"The user works at {m.group('v')}"
    return [Fact(as_sentence(text), "employer", "fact", said.conf, 0.75)]


def _no_more_doing(m: re.Match[str], said: Said) -> list[Fact] | None:
    return [Fact("", "", "fact", said.conf, 0.6, ends=[Ending(value=m.group("v"))])]


def _condition_alone(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = m.group("v").lower()
    slot = f"condition:{value_key(value)}"
    return [Fact(as_sentence(f"The user is {value}"), slot, "health", said.conf, 0.9)]


def _where_i_work(m: re.Match[str], said: Said) -> list[Fact] | None:
    verb = "works" if m.group("verb").lower() == "work" else "studies"
    text = f"The user {verb} in {m.group('v')}"
    return [Fact(as_sentence(text), f"{m.group('verb').lower()}place", "fact", said.conf, 0.7)]


def _outgrown(m: re.Match[str], said: Said) -> list[Fact] | None:
    slot = f"allergy:{value_key(m.group('v'))}"
    return [Fact("", slot, "health", said.conf, 0.9, ends=[Ending(slot=slot)])]


def _negative_for(m: re.Match[str], said: Said) -> list[Fact] | None:
    ends = [Ending(group="condition", value=m.group("v"))]
    return [Fact("", "", "health", said.conf, 0.9, ends=ends)]


def _replaced(m: re.Match[str], said: Said) -> list[Fact] | None:
    return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]


def _number_replaced(m: re.Match[str], said: Said) -> list[Fact] | None:
    return _replaced(m, said) if said.correction else None


def _rehomed(m: re.Match[str], said: Said) -> list[Fact] | None:
    return [Fact("", "", "fact", said.conf, 0.6, ends=[Ending(group="pet", value=m.group("v"))])]


def _last_shift(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = clean_value(m.group("v"))
    ends = [Ending(slot="employer", value=value), Ending(slot="job")]
    return [Fact("", "", "fact", said.conf, 0.7, ends=ends)]


def _first_week_as(m: re.Match[str], said: Said) -> list[Fact] | None:
    job = job_fact(SELF, m.group("job"), said.conf)
    org = clean_value(m.group("org"))
    text = f"The user works at {org}"
    return [job, Fact(as_sentence(text), "employer", "fact", said.conf, 0.75)]


def _thing_cancelled(m: re.Match[str], said: Said) -> list[Fact] | None:
    ends = [Ending(group="plan", value=m.group("v"))]
    return [Fact("", "", "plan", said.conf, 0.6, ends=ends)]


def _put_me_on(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"medication:{value_key(value)}"
    ends = [Ending(group="medication")] if m.group(0).lower().startswith("switched") else []
    text = f"The user takes {value}"
    facts = [Fact(as_sentence(text), slot, "health", said.conf, 0.9, ends=ends)]
    cond = (m.group("cond") or "").strip()
    if cond and CONDITION.fullmatch(cond):
        text = f"The user has {cond}"
        facts.append(
            Fact(as_sentence(text), f"condition:{value_key(cond)}", "health", said.conf, 0.9)
        )
    return facts


def _not_mine(m: re.Match[str], said: Said) -> list[Fact] | None:
    slot = f"allergy:{value_key(m.group('v'))}"
    return [Fact("", slot, "health", 0.9, 0.9, ends=[Ending(slot=slot)])]


def _age_said(m: re.Match[str], said: Said) -> list[Fact] | None:
    text = f"The user is {m.group('v')} years old"
    return [Fact(as_sentence(text), "age", "fact", said.conf, 0.6)]


def _resident(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = m.group("v")
    ends = [Ending(group="plan", value=value)]
    text = f"The user lives in {value}"
    return [Fact(as_sentence(text), "home", "fact", said.conf, 0.8, ends=ends)]


def _my_thing(m: re.Match[str], said: Said) -> list[Fact] | None:
    value = m.group("v")
    if value.lower() in NOT_A_THING:
        return None
    text = f"The user likes {value}"
    slot = f"opinion:{value_key(value)}"
    return [Fact(as_sentence(text), slot, "preference", said.conf, 0.6)]


def _rule(
    name: str,
    regex: str,
    slot: str,
    builder: Callable[[re.Match[str], Said], list[Fact] | None],
    note: str,
    *,
    anywhere: bool = False,
    flags: re.RegexFlag = re.I,
) -> Rule[Said]:
    return Rule(name, re.compile(regex, flags), slot, builder, "en", note, anywhere)


# In order: the first rule whose pattern matches and whose builder gives facts wins.
WHOLE_CLAUSE: tuple[Rule[Said], ...] = (
    _rule(
        "allergy-it-is",
        r"^it\s+is\s+(?:actually\s+|really\s+|only\s+)?(?P<v>[\w -]{2,40}?)\s+(?:that\s+)?i\s+"
        r"(?:am\s+)?(?:allergic\s+to|react\s+to|cannot\s+eat|can not\s+eat)$",
        "allergy",
        _allergy_it_is,
        'The allergen put first: "it\'s almonds I react to".',
    ),
    _rule(
        "fine-for-me",
        r"^(?P<v>[\w -]{2,40}?)\s+(?:is|are)\s+(?:totally\s+|completely\s+|perfectly\s+|actually\s+"
        r"|absolutely\s+)*(?:fine|ok|okay|safe)(?:\s+for\s+me)?$",
        "allergy",
        _fine_for_me,
        'A food said to be fine ends an allergy to it: "walnuts are fine".',
    ),
    _rule(
        "pet-died",
        r"^(?:we\s+|i\s+)?(?:had\s+to\s+)?put\s+(?P<v2>\w+)\s+down\b"
        r"|^(?:my\s+|our\s+)?(?:\w+\s+)?(?P<v>\w+)\s+(?:passed away|died|was put down|ran away"
        r"|is gone|crossed the rainbow bridge)\b",
        "pet",
        _pet_died,
        'A pet that died or ran away is no longer had: "Pickle passed away".',
    ),
    _rule(
        "pet-renamed",
        rf"\brenamed\s+(?:the|my|our|him|her|it)\s*(?P<v>{PETS})?",
        "pet",
        _renamed,
        "Renaming a pet ends its old name; the next clause says the new one.",
        anywhere=True,
    ),
    _rule(
        "pet-renamed-now-called",
        r"^(?:now\s+)?(?:he|she|it)\s+is\s+(?:called\s+)?" + NAME,
        "pet",
        _renamed_now_called,
        "After a renaming, the pet's new name: \"he's Captain now\".",
    ),
    _rule(
        "pet-current",
        rf"^my\s+(?:current|new|present)\s+(?P<species>{PETS})\s+is\s+(?:called\s+|named\s+)?"
        + NAME,
        "pet",
        _current_pet,
        'The pet had now, ending the one of that species before: "my new dog is Rex".',
    ),
    _rule(
        "my-allergy-is",
        r"^my\s+(?:only\s+|real\s+|actual\s+)?allerg(?:y|ies)\s+(?:is|are)\s+(?:to\s+)?"
        r"(?P<v>[\w -]+?)(?:,?\s+not\s+(?:to\s+)?(?P<old>[\w -]+))?$",
        "allergy",
        _my_allergy_is,
        'The allergy named as such, ending one it is "not": "my allergy is to cashews".',
    ),
    _rule(
        "diet-alone",
        rf"^(?:so\s+)?(?:i\s+am\s+|now\s+)?(?:an?\s+)?(?P<v>{DIETS})(?:\s+now)?(?:\s+i\s+guess)?\??$",
        "diet",
        _diet_alone,
        'A diet said on its own: "vegan now".',
    ),
    _rule(
        "pet-name-is",
        r"^(?:his|her|its)\s+name\s+is\s+" + NAME,
        "pet",
        _pet_name_is,
        'The name of the pet just mentioned: "her name is Miso".',
    ),
    _rule(
        "first-week-at",
        r"\bfirst\s+(?:week|day|month|shift)\s+at\s+(?P<v>(?-i:[A-Z])[\w&' -]+?)"
        r"(?:\s+done|\s+over|$)",
        "employer",
        _first_week_at,
        'A first week at a named place is work there: "first week at Shopify done".',
        anywhere=True,
    ),
    _rule(
        "no-more-doing",
        r"\bno\s+more\s+(?P<v>\w+ing)\b",
        "any",
        _no_more_doing,
        'An activity given up ends the facts that speak of it: "no more running".',
        anywhere=True,
    ),
    _rule(
        "condition-alone",
        r"^(?P<v>(?:type\s+\d\s+)?diabetic|asthmatic|celiac|coeliac|epileptic|anemic|anaemic"
        r"|pregnant|(?:lactose|gluten) intolerant)$",
        "condition",
        _condition_alone,
        'A condition said on its own: "diabetic".',
    ),
    _rule(
        "where-i-work",
        r"^(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)*)\s+is\s+(?:just\s+|only\s+)?where\s+"
        r"(?:i|we)\s+(?P<verb>work|study)",
        "workplace",
        _where_i_work,
        'A place named as where one works or studies: "Leeds is where I work".',
    ),
    _rule(
        "allergy-outgrown",
        r"\boutgrown\s+(?:the\s+|my\s+|an?\s+)?(?P<v>[\w -]{2,30}?)\s+(?:allergy|intolerance)",
        "allergy",
        _outgrown,
        'An allergy outgrown ends: "I\'ve outgrown the egg allergy".',
        anywhere=True,
    ),
    _rule(
        "tested-negative",
        r"\b(?:came back\s+)?negative\s+for\s+(?P<v>[\w' -]{2,30})",
        "condition",
        _negative_for,
        'A negative test ends the condition it names: "negative for celiac".',
        anywhere=True,
    ),
    _rule(
        "name-not",
        r"^(?:his|her|its|my|the)\s+name\s+is\s+(?P<new>(?-i:[A-Z])[\w'-]*),?\s+not"
        r"\s+(?P<old>(?-i:[A-Z])[\w'-]*)$",
        "correction",
        _replaced,
        'A name corrected in place: "her name is Joan, not Jon".',
    ),
    _rule(
        "number-not",
        r"^(?P<new>\d{1,3}),?\s+not\s+(?P<old>\d{1,3})$",
        "correction",
        _number_replaced,
        'In a correction, a number said instead of another: "34, not 43".',
        flags=re.NOFLAG,
    ),
    _rule(
        "pet-rehomed",
        r"\b(?:rehomed?|gave away|give away|found a new home for|had to give up|gave up)\s+"
        r"(?:my\s+|our\s+)?(?P<v>[\w'-]+)",
        "pet",
        _rehomed,
        'A pet given away is no longer had: "we rehomed Biscuit".',
        anywhere=True,
    ),
    _rule(
        "last-shift",
        r"\blast\s+(?:shift|day|week)\s+(?:at|with)\s+(?P<v>[\w' &-]+)",
        "employer",
        _last_shift,
        'A last shift at a place ends the work there: "last day at Costco".',
        anywhere=True,
    ),
    _rule(
        "first-week-as",
        r"\b(?:first|second|third)\s+(?:week|day|month|shift)\s+as\s+(?:an?\s+)?(?P<job>[\w -]+?)"
        r"\s+(?:at|for)\s+(?P<org>[\w' &-]+)",
        "job",
        _first_week_as,
        'A first week in a job at a place: "first week as a nurse at St Mary\'s".',
        anywhere=True,
    ),
    _rule(
        "thing-cancelled",
        r"^(?:the\s+|my\s+|our\s+)?(?P<v>[\w' -]{2,40}?)\s+(?:got|was|has been|is|have been)"
        r"\s+(?:cancell?ed|called off|postponed|scrapped)\b",
        "plan",
        _thing_cancelled,
        'A plan called off ends: "the Rome trip got cancelled".',
    ),
    _rule(
        "put-me-on",
        r"\b(?:put|started|switched|moved|changed)\s+me\s+(?P<how>on(?:to)?|to|over to)\s+"
        r"(?P<v>(?!an?\b|the\b)[\w-]+)(?:\s+for\s+(?P<cond>[\w ]{3,40}))?",
        "medication",
        _put_me_on,
        'A drug someone put the user on, and what for: "the doctor put me on metformin".',
        anywhere=True,
    ),
    _rule(
        "allergy-not-mine",
        r"^(?:the\s+)?(?P<v>[\w -]{2,30}?)\s+(?:allergy|intolerance)\s+is\s+(?:my|his|her|their)"
        r"\s+\w+'s,?\s+not\s+mine",
        "allergy",
        _not_mine,
        "An allergy that is somebody else's ends the user's: \"the nut allergy is my son's\".",
    ),
    _rule(
        "age-anywhere",
        r"\b(?:officially|just turned|turned|turning|am now|i am)\s+(?P<v>[1-9]\d)\b"
        r"(?!\s*(?:minutes|hours|days|weeks|months|%|am|pm|times|of|people|years? ago))",
        "age",
        _age_said,
        'An age turned or said anywhere in the clause: "officially 40 today".',
        anywhere=True,
    ),
    _rule(
        "resident",
        r"\b(?:an?|the)\s+(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)\s+"
        r"(?:resident|local)\b",
        "home",
        _resident,
        'A resident of a place lives there: "a Denver local now".',
        anywhere=True,
    ),
    _rule(
        "my-thing",
        r"^(?P<v>[\w -]{2,40}?)\s+is\s+(?:totally\s+)?my\s+(?:new\s+)?(?:thing|jam|passion"
        r"|favou?rite thing|obsession)\b",
        "opinion",
        _my_thing,
        'A thing called one\'s thing is liked: "swimming is my thing now".',
    ),
)
