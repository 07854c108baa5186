"""The English reading of a clause (pure: no Django, no database): who it is about and
what it says of them.

A clause is cleaned (greetings, hedges, filler and time words taken out), then read by
tables of rules, in order: corrections of a value said before, the whole-clause rules
(`english_whole`: "walnuts are fine", "Pickle passed away"), then its subject ("I", "my
sister") and the predicate rules (`english_predicates`, with a builder per kind of fact in
`english_builders`). `english_words` holds what they share.
"""

from __future__ import annotations

import re
from datetime import datetime

from apps.facts.english_predicates import predicate_facts
from apps.facts.english_whole import whole_clause
from apps.facts.english_words import (
    FILLER_END,
    NAME,
    as_sentence,
    bare_name,
    clean_value,
    relation_words,
)
from apps.facts.grammar import (
    DIETS,
    PETS,
    PLURAL_RELATIONS,
    RELATIONS,
    SELF,
    ClauseState,
    Ending,
    Fact,
    Who,
    stems,
    value_key,
)
from apps.facts.time_words import apply_time, take_time

__all__ = [
    "CLAUSES",
    "NAME",
    "SELF",
    "ClauseState",
    "Who",
    "as_sentence",
    "bare_name",
    "english_clause",
    "expand_contractions",
]

# --- English --------------------------------------------------------------------------------

_CONTRACTIONS = [
    (r"\bI'm\b", "I am"), (r"\bI've\b", "I have"), (r"\bI'll\b", "I will"),
    (r"\bI'd\b", "I would"), (r"\bcan't\b", "cannot"), (r"\bwon't\b", "will not"),
    (r"n't\b", " not"), (r"\b(it|he|she|that|there)'s\b", r"\1 is"),
    (r"\b(we|they|you)'re\b", r"\1 are"), (r"\b(we|they|you)'ve\b", r"\1 have"),
    (r"\bgonna\b", "going to"), (r"\bim\b", "I am"), (r"\bwanna\b", "want to"),
    (r"\bname's\b", "name is"),
    (r"\b(mom|mum|dad|sister|brother|wife|husband|son|daughter|friend|partner)'s\s+(?=an?\s|\w+ing\b)",
     r"\1 is "),
    (r"^(mom|mum|dad|mother|father)\b", r"my \1"),
]  # fmt: skip
_CONTRACTIONS_RE = [(re.compile(p, re.I), r) for p, r in _CONTRACTIONS]
# Verbs a chat turn starts a clause with, its subject dropped ("moved to Tucson, quit ...").
_DROPPED = (
    "moved|relocated|quit|left|started|got|went|became|switched|adopted|booked|finished"
    "|stopped|joined|retired|married|cancell?ed|had to cancel|gave up|took up|turned|cut|no more"
    "|named|called|taking|live in|living in|based in|handed in|put in|jumped ship"
)
CLAUSES = re.compile(
    r"(?<=[.!?])\s+|\n+|;\s*|:\s+(?=i\b)"
    r"|,?\s+(?:and|but|so|because|since|while|though|although|whereas|plus)\s+"
    r"(?=(?:now\s+|also\s+|then\s+|actually\s+|currently\s+|recently\s+|just\s+)?"
    r"(?:i|my|it|she|he|they|we)\b)"
    r"|,\s*(?=(?:and\s+|but\s+|now\s+|actually\s+|also\s+|instead\s+)*"
    r"(?:i|my|it is|its|it was|she|he|they|we|can you|could you|would you|do you|any)\b)"
    r"|,\s*(?=(?:moved|relocated|quit|retired|live|living|based|working|work)\s"
    r"+(?:up\s+|back\s+|over\s+)?(?:in|to|at|as|from)\b)"
    r"|\s+[—–]\s+|\s+-\s+|,\s*so\s+(?!that\b|much\b|many\b|far\b)"
    r"|,\s*(?=(?-i:[A-Z])[\w'-]+\s+(?:is|are)\s+(?:just\s+|only\s+)?where\b)"
    r"|,\s*(?=(?:and|but)\s+(?:now|then)\b)"
    # chat drops the subject: "moved to Tucson, quit teaching, and ..."
    r"|,?\s+and\s+(?=(?:then\s+|now\s+|also\s+|just\s+)?(?:"
    + _DROPPED
    + r"|works|lives|has|work|live)\b)"
    r"|,\s*(?=(?:and\s+)?(?:then\s+|now\s+|also\s+|just\s+)?(?:" + _DROPPED + r")\b)",
    re.I,
)
_LEAD = re.compile(
    r"^(?:(?:hi|hello|hey|well|oh|so|and|but|also|yes|yeah|ok|okay|um|uh|btw|by the way|anyway"
    r"|honestly|basically|fyi|oops|haha|lol|then|plus|welp|ugh|wow|yay|omg|guess what|news"
    r"|(?:\w+\s+){0,2}(?:update|news)|quick thing|fun fact|plot twist|confession"
    r"|small confession|so anyway|anyway|autocorrect|typo|my bad|ugh|whoops|oh no)\b[\s,!.:-]*)+",
    re.I,
)
_FRAME = re.compile(
    r"^(?:(?:it\s+)?turns out|apparently|it seems|i (?:just\s+)?(?:realized|realised|found out"
    r"|learned|learnt|noticed|remembered)|(?:the|my)\s+\w+\s+(?:said|says"
    r"|told me|thinks|confirmed)|to be honest|honestly|for the record|just so you know|fun fact)"
    r"(?:\s+that)?[\s,:]*",
    re.I,
)
_CORRECTION = re.compile(
    r"^(?:actually|correction|sorry|no(?=\s*[,!.:;-])|nope|wait|i mean(?=\s*,)"
    r"|i meant(?=\s*,)|to be clear|update|scratch that"
    r"|let me correct (?:that|myself)|i was wrong)\b[\s,!.:;-]*",
    re.I,
)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|probably|might|i think|not sure|possibly)\b", re.I)
_SUBJECT = re.compile(
    rf"^(?:(?P<self>i|we)\b|my\s+(?P<rel>{RELATIONS})(?:'s)?\b(?:\s*,?\s*(?P<relname>(?-i:[A-Z])[a-z]+)"
    r"(?=\s+(?:is|was|has|lives|works|just|recently|moved|got|loves|likes|hates|does|did|will"
    r"|plans|wants))\s*,?)?)",
    re.I,
)


def expand_contractions(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    for pattern, replacement in _CONTRACTIONS_RE:
        text = pattern.sub(replacement, text)
    return text


_MY_THING = re.compile(
    rf"^my\s+(?:(?P<rel>{RELATIONS})'s\s+)?(?P<attr>(?:favou?rite\s+)?[a-z]+(?:\s+[a-z]+)?)\s+"
    r"(?:is|are|was)\s+(?P<v>.+)",
    re.I,
)
_MY_PET = re.compile(
    rf"^my\s+(?:new\s+|little\s+)?(?P<species>{PETS})(?:'s name is"
    rf"|\s+is\s+(?:named|called)|,)?\s+{NAME}"
    r"(?:\s+(?P<pred>.+))?$",
    re.I,
)
_IT_IS = re.compile(
    r"^(?:it is|it was|its|it is actually|rather|but|only|just|instead(?:\s+it is)?)\s+(?P<v>.+)",
    re.I,
)
_NOW_A = re.compile(r"^(?:now\s+)?(?:i am\s+)?(?:an?\s+)?(?P<v>[\w -]{2,40})\s+now$", re.I)


_LATER_SUBJECT = re.compile(rf"(?<=[\s,:;!-])(?:i|we|my\s+(?:{RELATIONS}))\b", re.I)
_ELIDED = re.compile(
    r"^(?:just\s+|finally\s+|also\s+|recently\s+|officially\s+)*(?:moved|relocated|quit|left"
    r"|starting|start|got into|gone back|manage|run|taking|work|live|allergic|flying|heading"
    r"|going|travell?ing|driving|diagnosed|first week|last shift|his name|her name"
    r"|started|got|went|became|switched|adopted|booked|finished|stopped|joined|married|engaged"
    r"|divorced|turned|retired|cancell?ed|had to cancel|gave up|lost|works|lives|is|has|likes"
    r"|loves|hates|tapered|tapering|cut out|no more|took up|named|called|handed in|put in"
    r"|jumped ship|accepted)\b",
    re.I,
)
_REPLACEMENTS = [
    # "it's Joan, not Jon", "I meant Oakland, not Berkeley"
    re.compile(
        r"^(?:it\s+is|its|i\s+meant|i\s+mean|meant|that\s+should\s+be|should\s+be)\s+"
        r"(?P<new>[\w' -]{1,40}?),?\s+not\s+(?P<old>[\w' -]{1,40}?)\s*(?:,|$)",
        re.I,
    ),
    # "not Jon, Joan", "not celiac, just a gluten sensitivity"
    re.compile(
        r"^(?:it\s+is\s+)?not\s+(?P<old>[\w' -]{1,40}?),?\s+(?:it\s+is\s+|but\s+|just\s+|only\s+)*"
        r"(?P<new>(?!that\b)[\w' -]{1,40}?)\s*(?:,|$)",
        re.I,
    ),
    # "(the doctor) switched me from lisinopril to amlodipine"
    re.compile(
        r"^(?:\w+\s+){0,3}?(?:switched|changed|moved)\s+(?:me\s+|it\s+)?(?:from|off)\s+"
        r"(?P<old>[\w' -]{1,40}?)\s+(?:on)?to\s+(?P<new>[\w' -]{1,40}?)"
        r"\s*(?:,|$|\s+(?:bc|because|since|as|due|after|for|cause|cuz)\b)",
        re.I,
    ),
]


def _replacement(clause: str, correction: bool) -> Fact | None:
    for pattern in _REPLACEMENTS:
        match = pattern.match(clause)
        if match:
            old, new = clean_value(match.group("old")), clean_value(match.group("new"))
            new = re.sub(r"^(?:an?|the)\s+", "", new, flags=re.I)
            old = re.sub(r"^(?:an?|the)\s+", "", old, flags=re.I)
            if re.match(r"(?:i|we|my|it|he|she|they)\b", new, re.I):
                continue  # a clause of its own: "I meant I live in Oakland, not ..."
            if old and new and old.lower() != new.lower() and stems(old):
                return Fact("", "", "correction", 0.9, 0.8, replace=(old, new))
    return None


_ADVERBS = re.compile(
    r"\b(?:actually|honestly|definitely|officially|even|still|currently|also|just|really|finally"
    r"|fully|completely|obviously|basically|apparently"
    r"|recently|already|both|strictly|only|totally|absolutely|literally|basically|seriously"
    r"|truly|now)\s+",
    re.I,
)


_WHOLE_DIET = re.compile(rf"^(?:so\s+)?(?:an?\s+)?(?:{DIETS})\b", re.I)


def _parse(
    clause: str, previous: Who, carry: ClauseState, correction: bool
) -> tuple[list[Fact], Who]:
    """The facts of one cleaned clause, and whom it was about."""
    replaced = _replacement(clause, correction)
    if replaced is not None:
        return [replaced], previous
    if m := re.match(
        r"^(?:it\s+is\s+|its\s+|it\s+was\s+)?not\s+(?P<old>[\w' -]{2,30})$", clause, re.I
    ):
        carry.replace_old = m.group("old")
        return [], previous
    if carry.replace_old and (
        m := re.match(
            r"^(?:it\s+is|its|it\s+was|but|it\s+is\s+actually)\s+(?P<new>[\w' -]{2,30})$",
            clause,
            re.I,
        )
    ):
        old, carry.replace_old = carry.replace_old, ""
        new = re.sub(r"^(?:an?|the)\s+", "", m.group("new"), flags=re.I)
        return [Fact("", "", "correction", 0.9, 0.8, replace=(old, new))], previous
    whole = whole_clause(clause, correction, carry)
    if whole is not None:
        return whole, previous
    if (correction or carry.corrected) and (
        m := re.match(
            r"^(?:it\s+is|its)\s+(?:actually\s+|really\s+|only\s+|just\s+)*(?P<v>[\w' ,-]{2,60}?)$",
            clause,
            re.I,
        )
    ):
        carry.new_value = clean_value(m.group("v"), commas=True)
        return [], previous
    it_is = _IT_IS.match(clause)
    if it_is and carry.negated is not None:
        who = carry.negated[1]
        return _negated_value(it_is, carry), who
    return _parse_said(clause, previous, carry, correction)


def _negated_value(it_is: re.Match[str], carry: ClauseState) -> list[Fact]:
    """The negated fact, with a new value: "it's shellfish" after "I'm not allergic to
    peanuts"."""
    assert carry.negated is not None
    kind, who = carry.negated
    carry.negated = None
    value = clean_value(it_is.group("v"))
    prefix = {"allergy": "am allergic to ", "home": "live in ", "job": "work as ",
              "employer": "work at ", "diet": "am ", "condition": "have ",
              "condition-adj": "am ", "medication": "take ", "opinion": "like ",
              "marital": "am "}[kind]  # fmt: skip
    value = re.sub(r"^(?:to|in|at|as)\s+", "", value, flags=re.I)
    facts = predicate_facts(prefix + value, who, ClauseState(), True)
    return facts


def _parse_said(
    clause: str, previous: Who, carry: ClauseState, correction: bool
) -> tuple[list[Fact], Who]:
    """A clause that is no new value of a negated one: who it is about, and what it says."""
    facts: list[Fact] = []
    who = previous
    call = re.match(
        r"^(?i:(?:you can |please |just |everyone |people |friends |they |my friends )*"
        r"calls? me\s+)" + NAME,
        clause,
    )
    if call and bare_name(call.group("name")):
        facts = [
            Fact(as_sentence(f"The user's name is {call.group('name')}"), "name", "fact", 0.8, 0.9)
        ]
        return facts, SELF
    thing = _MY_THING.match(clause)
    pet = _MY_PET.match(clause)
    subject = _SUBJECT.match(clause)
    if pet and re.match(
        r"^(?:died|passed away|ran away|is gone|was put down)", pet.group("pred") or ""
    ):
        facts = [
            Fact("", "", "fact", 0.8, 0.6, ends=[Ending(group="pet", value=pet.group("name"))])
        ]
    elif pet:
        species, name = pet.group("species").lower(), pet.group("name")
        text = f"The user has a {species} named {name}"
        facts = [Fact(as_sentence(text), f"pet:{value_key(name)}", "fact", 0.8, 0.7)]
    elif (
        thing
        and thing.group("attr").lower().split()[0] not in relation_words()
        and not re.match(r"^\w+ing\b|.*\bmy\b", thing.group("v"), re.I)
    ):
        facts = _my_thing_facts(thing, correction)
    elif subject:
        facts, who = _subject_facts(subject, clause, carry, correction)
    elif who is not SELF and re.match(r"^(?:she|he|they)\b", clause, re.I):
        rest = re.sub(r"^(?:she|he|they)\s+", "", clause, flags=re.I)
        facts = predicate_facts(rest, who, carry, correction)
    else:
        now_a = _NOW_A.match(clause)
        if (
            now_a
            and carry.negated is None
            and re.search(rf"\b(?:{DIETS})\b", now_a.group("v"), re.I)
        ):
            facts = predicate_facts("am " + now_a.group("v"), SELF, carry, correction)
    return facts, who


def _my_thing_facts(thing: re.Match[str], correction: bool) -> list[Fact]:
    """ "My sister's name is Ana", "my address is ...": an attribute of the user or of one
    of their people."""
    facts: list[Fact] = []
    rel, attr = thing.group("rel"), thing.group("attr").lower()
    value = clean_value(
        re.sub(
            r"^(?:actually|really|now|still|officially)\s+",
            "",
            thing.group("v"),
            flags=re.I,
        ),
        commas=True,
    )
    if (value and attr not in ("name",)) or (attr == "name" and value):
        owner = f"The user's {rel.lower()}" if rel else "The user"
        prefix = f"{rel.lower()}|" if rel else ""
        slot = {"name": "name", "job": "job", "home": "home", "address": "home"}.get(attr, attr)
        text = f"{owner}'s {attr} is {value}"
        facts = [
            Fact(
                as_sentence(text),
                f"{prefix}{slot}",
                "relationship" if rel else "fact",
                0.9 if correction else 0.8,
                0.9 if attr == "name" else 0.7,
            )
        ]
    return facts


def _subject_facts(
    subject: re.Match[str], clause: str, carry: ClauseState, correction: bool
) -> tuple[list[Fact], Who]:
    """A clause with its subject ("I ...", "my sister ..."): what it says of them."""
    facts: list[Fact] = []
    if subject.group("rel"):
        rel = subject.group("rel").lower()
        who = Who(f"The user's {rel}", f"{rel}|", plural=rel in PLURAL_RELATIONS)
        relname = subject.group("relname")
        rest = clause[subject.end() :].strip(" ,")
        if relname:
            facts.append(
                Fact(
                    as_sentence(f"The user's {rel}'s name is {relname}"),
                    f"{rel}|name",
                    "relationship",
                    0.8,
                    0.6,
                )
            )
    else:
        who = SELF
        rest = clause[subject.end() :].strip(" ,")
    rest = re.sub(
        r"^(?:also|still|now|just|recently|finally|actually|currently|then|really)\s+",
        "",
        rest,
        flags=re.I,
    )
    rest = re.sub(
        r"^(?:also|still|now|just|recently|finally|actually|currently|then|really)\s+",
        "",
        rest,
        flags=re.I,
    )
    carry.only = bool(re.search(r"\bonly\b", rest, re.I))
    rest = _ADVERBS.sub("", rest)
    facts += predicate_facts(rest, who, carry, correction)
    carry.only = False
    return facts, who


def english_clause(
    raw: str, carry: ClauseState, now: datetime, previous: Who
) -> tuple[list[Fact], Who]:
    clause = _LEAD.sub("", raw.strip().rstrip(" .!")).strip()
    correction = bool(_CORRECTION.match(clause))
    clause = _CORRECTION.sub("", clause).strip()
    clause = _LEAD.sub("", clause).strip()
    clause = _FRAME.sub("", clause).strip()
    clause = re.sub(r"\s+(?:to be honest|by the way|as well)$", "", clause, flags=re.I)
    clause = re.sub(
        r"\s*\b(?:after all|at all|for good|completely|entirely)\b", "", clause, flags=re.I
    )
    clause = FILLER_END.sub("", clause).strip()
    clause = re.sub(r"\s*\([^)]*\)", "", clause)  # (said apart: see facts_of)
    clause = re.sub(r"\s*[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]+\s*", " ", clause).strip()
    clause = re.sub(r"^(?:[^:,]{1,30}):\s+(?=\S)", "", clause)  # "Big life update all at once: ..."
    hedged = bool(_HEDGE.search(clause))
    clause = re.sub(
        r"\b(?:i think|i guess|maybe|perhaps|probably|possibly)\b[\s,]*", "", clause, flags=re.I
    ).strip()
    clause, when = take_time(clause, now)
    clause = re.sub(r"^(?:then|and|but|so|also|actually)\s+", "", clause, flags=re.I).strip()
    clause = re.sub(r"^been\s+", "I have been ", clause, flags=re.I)  # chat drops "I've"
    clause = re.sub(r"\s+([?!.,])", r"\1", clause).rstrip(" .!")
    if correction and not clause:
        carry.corrected = True
    if re.search(r"\bautocorrect|\b(?:misspoke|mistyped|typo)\b", raw, re.I):
        carry.corrected = True
    if (
        not clause
        or (clause.endswith("?") and len(clause.split()) < 4 and not _WHOLE_DIET.match(clause))
        or re.match(r"^(?:can|could|would|will|do|does|did)\s+you\b|^any\s+\w+\??$", clause, re.I)
        or (
            re.match(
                r"^(?:do|does|did|can|could|would|should|what|where|when|who|how|why|is|are)\b",
                clause,
                re.I,
            )
            and "?" in raw
        )
    ):
        return [], previous
    facts, who = _parse(clause, previous, carry, correction)
    if not facts:
        # The subject later in the clause: "so turns out I'm ...", "big update, we moved ..."
        for found in _LATER_SUBJECT.finditer(clause):
            if len(clause[: found.start()].split()) > 8:
                break
            facts, who = _parse(clause[found.start() :], previous, carry, correction)
            if facts:
                break
    if not facts and _ELIDED.match(clause):
        # No subject at all, as chat drops it: "moved to Tucson", "quit teaching".
        facts = predicate_facts(_ADVERBS.sub("", clause), previous, carry, correction)
    if correction and not facts:
        carry.corrected = True  # "Sorry, I got that wrong." — the next clause corrects
    for fact in facts:
        if hedged:
            fact.confidence = min(fact.confidence, 0.5)
        apply_time(fact, when, now)
    return facts, who
