"""Extractors: conversation turns in, candidate memories out (pure: no Django, no database).

The offline extractor keeps every user turn as an episodic memory and turns self-disclosures
(facts about the user, preferences, plans, corrections) into semantic memories with a
confidence, an importance and, for facts that hold one value at a time ("my favourite colour
is ..."), a slot, so that a later value supersedes the earlier one instead of sitting beside it.

Never extracted: system and tool turns, assistant turns (boilerplate, and not the user's
words), text inside a recalled-memory block (what MemoryHub itself put into the prompt), and
user turns that repeat a system prompt of the same batch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

# The context API wraps recalled memories in these markers; text between them came from
# MemoryHub and is never extracted again.
MEMORY_BLOCK_START = "<memories>"
MEMORY_BLOCK_END = "</memories>"
_MEMORY_BLOCK = re.compile(
    re.escape(MEMORY_BLOCK_START) + r".*?(?:" + re.escape(MEMORY_BLOCK_END) + r"|\Z)",
    re.DOTALL | re.IGNORECASE,
)


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    position: int
    name: str = ""
    created_at: datetime | None = None


@dataclass
class Candidate:
    """A memory an extractor proposes. `slot` names what a fact is about (plaintext: the
    caller stores only a keyed hash of it); `position` is the turn it came from."""

    content: str
    kind: str  # "episodic" | "semantic"
    position: int
    confidence: float = 1.0
    importance: float = 0.5
    slot: str = ""
    category: str = ""  # fact | preference | plan | correction | turn
    tags: list[str] = field(default_factory=list)


class Extractor(Protocol):
    name: str

    def extract(self, turns: list[Turn]) -> list[Candidate]: ...


def strip_recalled(text: str) -> str:
    return _MEMORY_BLOCK.sub(" ", text).strip()


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def extractable_turns(turns: list[Turn]) -> list[Turn]:
    """User turns with recalled-memory blocks removed, minus those that are empty then or
    repeat a system prompt of the batch."""
    system = [_normal(t.content) for t in turns if t.role == "system"]
    kept = []
    for turn in turns:
        if turn.role != "user":
            continue
        text = strip_recalled(turn.content)
        normal = _normal(text)
        if not normal or any(len(normal) >= 20 and normal in prompt for prompt in system):
            continue
        kept.append(Turn(turn.role, text, turn.position, turn.name, turn.created_at))
    return kept


# --- offline self-disclosure patterns --------------------------------------------------------

_CLAUSE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+|;\s*|,\s*(?:but|and then|and also)\s+", re.I)
_CORRECTION = re.compile(
    r"^\s*(?:actually|correction|sorry|no|wait|oops|to be clear)\b[\s,:;-]*(?:it'?s|i meant)?\s*",
    re.IGNORECASE,
)
_LEADING = r"^\s*(?:and|but|so|also|well|oh|hey|hi|yes|yeah|ok|okay)?[\s,]*"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "name",
        re.compile(_LEADING + r"(?:my name is|call me|i go by)\s+(?P<value>[\w' -]{1,40})", re.I),
    ),
    (
        "attribute",
        re.compile(
            _LEADING
            + r"my (?P<attribute>(?:[a-z]+ ){0,2}[a-z]+) (?:is|are|was) (?P<value>.{1,120})",
            re.I,
        ),
    ),
    (
        "lives",
        re.compile(
            _LEADING + r"i(?:'ve| have)? (?:live|moved|relocated) (?:in|to) (?P<value>.{1,80})",
            re.I,
        ),
    ),
    (
        "works",
        re.compile(
            _LEADING + r"i (?:work|am working|'m working) (?:as|at|for) (?P<value>.{1,80})", re.I
        ),
    ),
    (
        "preference",
        re.compile(
            _LEADING + r"i (?:really |absolutely |also |totally )?"
            r"(?P<verb>love|like|enjoy|prefer|adore|hate|dislike|can't stand|cannot stand"
            r"|don't like|do not like)"
            r" (?P<value>.{1,100})",
            re.I,
        ),
    ),
    (
        "allergy",
        re.compile(_LEADING + r"i(?:'m| am) (?:allergic|intolerant) to (?P<value>.{1,80})", re.I),
    ),
    (
        "plan",
        re.compile(
            _LEADING
            + r"i(?:'m| am)? ?(?:going to|planning to|plan to|will|'ll|intend to|hope to|want to)"
            r" (?P<value>.{3,120})",
            re.I,
        ),
    ),
    ("identity", re.compile(_LEADING + r"i(?:'m| am) (?:a|an) (?P<value>[\w -]{2,60})", re.I)),
]
_NEGATIVE = {"hate", "dislike", "can't stand", "cannot stand", "don't like", "do not like"}
_PRONOUNS = [
    (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bmine\b", re.I), "theirs"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
    (re.compile(r"\bI'm\b|\bI am\b"), "they are"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bme\b", re.I), "them"),
]


def _third_person(text: str) -> str:
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text.strip(" ,;:-").rstrip(".!?").strip()


def _clause(value: str) -> str:
    # A value ends at the next clause ("..., but", "... because").
    return re.split(r",\s*(?:but|and|because|so|although)\b|\s+because\s+", value, maxsplit=1)[0]


def disclosures(text: str, position: int, who: str = "The user") -> list[Candidate]:
    """Semantic memories stated by a user turn about themselves."""
    found: list[Candidate] = []
    for sentence in filter(None, (part.strip() for part in _CLAUSE_BREAK.split(text))):
        correction = bool(_CORRECTION.match(sentence))
        body = _CORRECTION.sub("", sentence, count=1) if correction else sentence
        for category, pattern in _PATTERNS:
            match = pattern.search(body)
            if not match:
                continue
            value = _third_person(_clause(match.group("value")))
            if not value or "?" in sentence:
                break
            if category == "name":
                content, slot, importance = f"{who}'s name is {value}", "name", 0.9
            elif category == "attribute":
                attribute = match.group("attribute").lower()
                content, slot, importance = f"{who}'s {attribute} is {value}", attribute, 0.7
            elif category == "lives":
                content, slot, importance = f"{who} lives in {value}", "home", 0.8
            elif category == "works":
                content, slot, importance = f"{who} works as/at {value}", "work", 0.7
            elif category == "preference":
                verb = match.group("verb").lower()
                negative = verb in _NEGATIVE
                content = f"{who} {'dislikes' if negative else 'likes'} {value}"
                # One opinion per thing: liking it later supersedes disliking it.
                slot, importance = f"opinion:{_normal(value)}", 0.6
            elif category == "allergy":
                content, slot, importance = f"{who} is allergic to {value}", "", 0.9
            elif category == "plan":
                content, slot, importance = f"{who} plans to {value}", "", 0.6
            else:
                content, slot, importance = f"{who} is a {value}", "", 0.6
            found.append(
                Candidate(
                    content=content[0].upper() + content[1:],
                    kind="semantic",
                    position=position,
                    confidence=0.9 if correction else 0.75 if category == "plan" else 0.8,
                    importance=round(min(1.0, importance + (0.1 if correction else 0.0)), 3),
                    slot=slot,
                    category="correction" if correction else category,
                )
            )
            break  # one disclosure per sentence: the first (most specific) pattern
    return found


def turn_importance(text: str) -> float:
    """Offline importance of an episodic turn: longer, more specific turns matter more."""
    words = len(re.findall(r"\w+", text))
    specifics = len(re.findall(r"\b\d+\b|\b[A-Z][a-z]+\b", text))
    return round(min(0.8, 0.2 + 0.01 * words + 0.03 * specifics), 3)


class OfflineExtractor:
    name = "offline"

    def extract(self, turns: list[Turn]) -> list[Candidate]:
        candidates: list[Candidate] = []
        for turn in extractable_turns(turns):
            text = f"{turn.name}: {turn.content}" if turn.name else turn.content
            candidates.append(
                Candidate(
                    content=text,
                    kind="episodic",
                    position=turn.position,
                    importance=turn_importance(turn.content),
                    category="turn",
                )
            )
            candidates.extend(disclosures(turn.content, turn.position))
        return candidates


# --- offline summaries --------------------------------------------------------------------------


def _sentence_score(sentence: str) -> float:
    words = re.findall(r"\w+", sentence)
    if len(words) < 3 or sentence.rstrip().endswith("?"):
        return 0.0
    specifics = len(re.findall(r"\b\d+\b|(?<!^)\b[A-Z][a-z]+\b", sentence))
    disclosed = 2.0 if disclosures(sentence, 0) else 0.0
    return disclosed + 0.5 * specifics + min(len(words), 30) / 30


class OfflineSummarizer:
    """An extractive rolling summary: the most informative sentences of the user's turns
    (self-disclosures first, then specific ones: names, numbers), in conversation order,
    within a word budget; the previous summary's sentences compete with the new ones."""

    name = "offline"

    def __init__(self, words: int = 150) -> None:
        self.words = words

    def summarize(self, turns: list[Turn], previous: str = "") -> str:
        pool: list[tuple[float, int, str]] = []
        for order, sentence in enumerate(
            part.strip() for part in _CLAUSE_BREAK.split(previous) if part.strip()
        ):
            pool.append((_sentence_score(sentence) + 0.5, order, sentence))  # kept before
        base = len(pool)
        for turn in extractable_turns(turns):
            speaker = turn.name or "User"
            for sentence in filter(None, (p.strip() for p in _CLAUSE_BREAK.split(turn.content))):
                score = _sentence_score(sentence)
                if score > 0:
                    text = (
                        sentence if sentence.startswith(f"{speaker}:") else f"{speaker}: {sentence}"
                    )
                    pool.append((score, base + turn.position, text))
        chosen: list[tuple[int, str]] = []
        used = 0
        for _score, order, sentence in sorted(pool, key=lambda item: (-item[0], item[1])):
            size = len(sentence.split())
            if used + size > self.words or sentence in (s for _, s in chosen):
                continue
            chosen.append((order, sentence))
            used += size
        return " ".join(s if s.endswith((".", "!")) else s + "." for _, s in sorted(chosen))
