"""Extractors: conversation turns in, candidate memories out (pure: no Django, no database).

The offline extractor keeps every user turn as an episodic memory and cuts what the user
states about themselves and their people into atomic facts (`facts.py`): one slot each, so
that a later value supersedes only the slot it changes; negations and changes end the facts
they contradict; time words become structured time.

Never extracted: system and tool turns, assistant turns (boilerplate, and not the user's
words), text inside a recalled-memory block (what MemoryHub itself put into the prompt), and
user turns that repeat a system prompt of the same batch.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from apps.facts.doubt import Dispute
from apps.facts.rules import Ending, facts_of, speaks_of, substitute
from memoryhub.json_input import json_loads

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
    category: str = ""  # fact | preference | plan | event | health | relationship | turn ...
    tags: list[str] = field(default_factory=list)
    # The current facts this one ends (a negation, a change); `content` is empty when it
    # only ends facts ("I'm not allergic to peanuts").
    ends: list[Ending] = field(default_factory=list)
    occurred_at: datetime | None = None  # when it happens or happened (plans, events)
    valid_from: datetime | None = None  # from when it holds ("I moved ... last week")
    expires_at: datetime | None = None  # a plan lapses after its date
    replace: tuple[str, str] | None = None  # a corrected value: (said before, meant)
    speaker: str = ""  # a turn's speaker (the message's `name`): recall's speaker signal
    # Current facts the turn puts in doubt without saying what holds instead: each becomes
    # disputed (out of the current facts, in the review queue) until a person decides.
    disputes: list[Dispute] = field(default_factory=list)
    # An LLM's fact: the model that proposed it (empty: the rules), the span of the turn it
    # rests on and the value it names (`grounding.py` checks both; neither is stored).
    model: str = ""
    evidence: str = ""
    value: str = ""


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


def turn_importance(text: str) -> float:
    """Offline importance of an episodic turn: longer, more specific turns matter more."""
    words = len(re.findall(r"\w+", text))
    specifics = len(re.findall(r"\b\d+\b|\b[A-Z][a-z]+\b", text))
    return round(min(0.8, 0.2 + 0.01 * words + 0.03 * specifics), 3)


class OfflineExtractor:
    name = "offline"

    def extract(self, turns: list[Turn]) -> list[Candidate]:
        candidates: list[Candidate] = []
        previous: Turn | None = None
        for turn in extractable_turns(turns):
            said, previous = _continued(previous, turn), turn
            text = f"{turn.name}: {turn.content}" if turn.name else turn.content
            candidates.append(
                Candidate(
                    content=text,
                    kind="episodic",
                    position=turn.position,
                    importance=turn_importance(turn.content),
                    category="turn",
                    # When it was said (indexed as date words) and by whom: the signals recall
                    # uses, set from the message's `created_at` and `name`.
                    occurred_at=turn.created_at,
                    speaker=turn.name,
                )
            )
            candidates.extend(atomic_facts(said))
        return candidates


# A message sent before its sentence ended ("so we finally escaped brooklyn and" / "landed in
# jersey city"): it ends on a word that cannot end a sentence, with no closing punctuation.
_UNFINISHED = re.compile(
    r"(?:\b(?:and|or|but|so|in|to|at|the|a|an|my|of|for|with|from|into|is|am|are|was|were|i"
    r"|we|then|because|bc|cuz)|[在是和的我从到去跟把])\s*$",
    re.I,
)


# A message that opens with what the one before it was about ("shellfish came back
# negative" / "its PEANUTS", "医生说我这不是感冒" / "是过敏性鼻炎").
_COMPLETES = re.compile(r"^\s*(?:(?:it'?s|its|it\s+is|it\s+was)\b|(?:是|就是|而是|其实是))", re.I)


def _continued(previous: Turn | None, turn: Turn) -> Turn:
    """The turn as its facts are read: joined to the message before it when that one was
    sent mid-sentence, or this one completes it (the speaker's next message of the same
    batch)."""
    if (
        previous is None
        or previous.position != turn.position - 1
        or previous.name != turn.name
        or not (_UNFINISHED.search(previous.content) or _COMPLETES.match(turn.content))
    ):
        return turn
    joined = f"{previous.content.rstrip()} {turn.content.lstrip()}"
    return Turn(turn.role, joined, turn.position, turn.name, turn.created_at)


def atomic_facts(turn: Turn, now: datetime | None = None) -> list[Candidate]:
    """The turn's atomic facts as semantic candidates (`facts.py`)."""
    now = now or turn.created_at or datetime.now(UTC)
    return [
        Candidate(
            content=fact.statement,
            kind="semantic",
            position=turn.position,
            confidence=fact.confidence,
            importance=fact.importance,
            slot=fact.slot,
            category=fact.category,
            ends=fact.ends,
            disputes=fact.disputes,
            occurred_at=fact.occurred_at,
            valid_from=fact.valid_from,
            expires_at=fact.expires_at,
            replace=fact.replace,
        )
        for fact in facts_of(turn.content, now)
    ]


# --- offline summaries --------------------------------------------------------------------------


@dataclass
class _Held:
    """A slot's current statement in a summary, with the values it replaced."""

    statement: str
    importance: float
    order: int
    history: list[str] = field(default_factory=list)


def _predicate(statement: str) -> str:
    """ "The user lives in Hangzhou." -> "lives in Hangzhou"; "用户住在杭州。" -> "住在杭州"."""
    text = statement.rstrip(".。")
    for subject in ("The user's ", "The user ", "用户的", "用户"):
        if text.startswith(subject):
            return text[len(subject) :]
    return text


def _with_history(held: _Held) -> str:
    if not held.history:
        return held.statement
    chinese = held.statement.endswith("。")
    before = "；".join(held.history) if chinese else "; ".join(held.history)
    if chinese:
        return f"{held.statement.rstrip('。')}（此前：{before}）。"
    return f"{held.statement.rstrip('.')} (previously: {before})."


@dataclass
class SummaryDigest:
    """What a session's offline summary is made of, kept with it so that the next turns
    extend it (`OfflineSummarizer.extend`) instead of the whole session being read again:
    the current facts by slot (with the values they replaced) in the order they were first
    said, the user's other sentences (the SAID_KEPT most specific) and the turns' words.
    Plaintext: stored only encrypted, beside the summary it makes."""

    held: dict[str, _Held] = field(default_factory=dict)
    order: int = 0
    said: list[str] = field(default_factory=list)
    words: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {
                "held": [[key, asdict(item)] for key, item in self.held.items()],
                "order": self.order,
                "said": self.said,
                "words": self.words,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> SummaryDigest:
        """The digest `to_json` wrote; JsonInputError (a ValueError) for text that is not
        one within the JSON guard's bounds."""
        data = json_loads(text)
        return cls(
            held={key: _Held(**item) for key, item in data["held"]},
            order=data["order"],
            said=data["said"],
            words=data["words"],
        )


# The user's sentences a digest keeps, most specific first: a summary of SUMMARY_WORDS words
# quotes a few dozen at most.
SAID_KEPT = 200


def _digest_into(digest: SummaryDigest, turns: list[Turn], now: datetime | None = None) -> None:
    """Extend the digest's current facts with what these (later) turns state."""
    held = digest.held
    for turn in extractable_turns(turns):
        moment = now or turn.created_at or datetime.now(UTC)
        for fact in facts_of(turn.content, moment):
            if fact.replace is not None:
                old, new = fact.replace
                for key, item in list(held.items()):
                    if speaks_of(item.statement, old):
                        corrected = substitute(item.statement, old, new)
                        held[key] = _Held(corrected, item.importance, item.order, item.history)
                continue
            for ending in fact.ends:
                for key in list(held):
                    slot_matches = not ending.slot or key == ending.slot
                    group_matches = not ending.group or key.split(":")[0] == ending.group
                    own = ending.slot or ending.group or "|" not in key
                    said = not ending.value or speaks_of(held[key].statement, ending.value)
                    if slot_matches and group_matches and own and said:
                        del held[key]
            if not fact.statement:
                continue
            key = fact.slot or f"statement:{fact.statement.lower()}"
            previous = held.get(key)
            if previous is not None and previous.statement != fact.statement:
                history = [*previous.history, _predicate(previous.statement)]
                held[key] = _Held(fact.statement, fact.importance, previous.order, history)
            elif previous is None:
                held[key] = _Held(fact.statement, fact.importance, digest.order)
                digest.order += 1


def _sentence_score(sentence: str) -> float:
    words = re.findall(r"\w+", sentence)
    if len(words) < 3 or sentence.rstrip().endswith(("?", "？")):
        return 0.0
    specifics = len(re.findall(r"\b\d+\b|(?<!^)\b[A-Z][a-z]+\b", sentence))
    return 0.5 * specifics + min(len(words), 30) / 30


def _said(turns: list[Turn]) -> list[str]:
    """The user's sentences that state no fact (what happened, what they asked for), in
    the order said; questions and small talk left out."""
    sentences = []
    for turn in extractable_turns(turns):
        moment = turn.created_at or datetime.now(UTC)
        for part in re.split(r"(?<=[.!?。！？])\s*", turn.content):
            part = part.strip()
            if part and _sentence_score(part) >= 0.5 and not facts_of(part, moment):
                sentences.append(part)
    return sentences


MIN_SUMMARY_WORDS = 30


def _words(item: Turn | str) -> int:
    """Words of a text, a CJK character counting as half of one (about a token each)."""
    text = item if isinstance(item, str) else item.content
    cjk = len(re.findall(r"[\u3400-\u9fff]", text))
    return len(re.findall(r"[^\W\d_\u3400-\u9fff]+|\d+", text)) + (cjk + 1) // 2


def _quoted(sentence: str) -> str:
    if re.search(r"[\u3400-\u9fff]", sentence):
        return f"用户说：“{sentence}”"
    return f'The user said: "{sentence}"'


class OfflineSummarizer:
    """An extractive summary of a session: the current facts its user turns state, one
    sentence each, a replaced value kept only as history ("lives in Shanghai (previously:
    lives in Hangzhou)"), then, as the word cap allows, the most specific of the user's
    other sentences (what happened), quoted, within a quarter of the turns' words.
    Facts are chosen most important first and written in the order they were said. Not
    rolling: it reads the session's turns."""

    name = "offline"
    rolling = False

    def __init__(self, words: int = 150) -> None:
        self.words = words

    def summarize(self, turns: list[Turn], previous: str = "") -> str:
        return self.extend(SummaryDigest(), turns)

    def extend(self, digest: SummaryDigest, turns: list[Turn]) -> str:
        """The summary of the turns the digest was made of and then these: the digest is
        extended with them (the same summary as `summarize` of all the turns at once, but
        for the SAID_KEPT bound and system prompts, which are matched within a batch)."""
        _digest_into(digest, turns)
        # Python's sort is stable: ties stay in the order said, as in one sort of them all.
        digest.said = sorted(digest.said + _said(turns), key=_sentence_score, reverse=True)[
            :SAID_KEPT
        ]
        digest.words += sum(map(_words, turns))
        chosen: list[tuple[int, str]] = []
        used = 0
        # A summary is much shorter than what it summarises: at most a quarter of the
        # turns' words (a few facts' worth, however short the session), and self.words.
        cap = min(self.words, max(MIN_SUMMARY_WORDS, digest.words // 4))

        def take(order: int, text: str) -> None:
            nonlocal used
            size = _words(text)
            if used + size <= cap:
                chosen.append((order, text))
                used += size

        held = sorted(digest.held.values(), key=lambda h: h.order)
        for item in sorted(held, key=lambda h: (-h.importance, h.order)):
            take(item.order, _with_history(item))
        for number, sentence in enumerate(digest.said):
            take(len(held) + number, _quoted(sentence))
        texts = [text for _, text in sorted(chosen)]
        return "".join(t if t.endswith(("。", "”")) else t + " " for t in texts).strip()
