"""The English words and helpers every English rule table shares: how a name is written,
where a value ends, how a statement is worded (pure: no Django, no database).
"""

from __future__ import annotations

import re

from apps.facts import vocabulary
from apps.facts.grammar import DEMONYM, NOT_NAME, NOT_OCCUPATION, RELATIONS, Fact, Who

# A proper name of one to three capitalised words ("Liz", "Captain Jack"), in group `name`.
NAME = r"(?P<name>(?-i:[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2}))"
# Capitalised names in a list ("Miso, Tofu and Bean").
NAMES = r"(?-i:[A-Z][\w'-]+)(?:\s*(?:,|\band\b|&)\s*(?-i:[A-Z][\w'-]+))*"

# Words that stand for a thing without naming it: "it is fine", "they passed away".
NOT_A_THING = {"i", "we", "he", "she", "it", "they", "that", "this", "everything", "all"}

_VALUE_END = re.compile(
    r"\s*(?:,|\bbecause\b|\bsince\b|\bwhich\b|\bwho\b|\bwhere\b|\bbut\b|\bso\b|\bthough\b|\bif\b"
    r"|\bwhen\b|\bas well\b|\bthat is\b|\bright\b|\bthough\b|!|\?|$)",
    re.I,
)
_VALUE_END_KEEP_COMMAS = re.compile(
    r"\s*(?:,\s*(?:but|and|because|which|so)\b|\bbecause\b|\bwhich\b|\bbut\b|\bso\b|!|\?|$)",
    re.I,
)
# Chat filler and emoji a clause or a value ends with ("..., lol", "... btw 🎉").
FILLER_END = re.compile(
    r"(?:[\s,]+(?:btw|by the way|haha+|hah|lol|lmao|tbh|fyi|so yeah|yay|omg|ugh|rn"
    r"|at all|for good|for real|you know|obviously|ofc|ngl|lmk|tho|though|anyway|i guess"
    r"|now i guess)|[\s,]*(?::\)|:\(|:D|[\U0001F300-\U0001FAFF"
    r"\u2600-\u27BF\uFE0F]+))+[\s.!]*$",
    re.I,
)


def clean_value(value: str, commas: bool = False) -> str:
    """A value cut where its sentence goes on ("Leeds, which ..."), without the filler and
    adverbs a chat puts after it ("Leeds now lol")."""
    value = (_VALUE_END_KEEP_COMMAS if commas else _VALUE_END).split(value, maxsplit=1)[0]
    value = FILLER_END.sub("", value)
    value = re.sub(
        r"(?:\s+(?:now|again|too|as well|instead|anyway|these days|though|after all|at all|for now"
        r"|there|here|i guess|lol|haha"
        r"|either|anymore|any more|any longer))+$",
        "",
        value,
        flags=re.I,
    )
    return value.strip(" .,;:!-\"'")


def value_of(match: re.Match[str], group: str = "v") -> str:
    """A match's value group, cleaned (`clean_value`); "" when the group did not match."""
    return clean_value(match.group(group) or "")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def as_sentence(text: str) -> str:
    text = re.sub(r"\s{2,}", " ", text).strip()
    return _cap(text if text.endswith((".", "!", "。")) else text + ".")


def bare_name(value: str) -> bool:
    words = value.split()
    return (
        0 < len(words) <= 3
        and all(w[0].isupper() for w in words)
        and not DEMONYM.match(value)
        and not NOT_NAME.match(value)
    )


def is_occupation(value: str) -> bool:
    """A job title whose head noun is a known occupation (`vocabulary`), not a word that only
    looks like one ("a professional overthinker", "an expert hiker")."""
    return vocabulary.names_an_occupation(value) and not NOT_OCCUPATION.search(value.lower())


def job_fact(who: Who, value: str, conf: float) -> Fact:
    """ "<who> works as a <value>" in the job slot."""
    article = "an" if value[:1].lower() in "aeiou" else "a"
    text = f"{who.name} {who.verb('works', 'work')} as {article} {value}"
    return Fact(as_sentence(text), f"{who.prefix}job", "fact", conf, 0.75)


def relation_words() -> set[str]:
    return set(RELATIONS.replace("?", "").split("|"))
