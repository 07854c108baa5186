"""Reading LoCoMo-format conversations (Maharana et al., 2024) into turns and questions."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ANSWERABLE_CATEGORIES = {1, 2, 3, 4}
ADVERSARIAL = 5  # questions about things never said: unanswerable (they measure abstention)
# A question's language case is kept to this many characters (EvalCase.language).
LANGUAGE_LIMIT = 16
# The categories' names, as the LoCoMo paper has them (an eval case's category).
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "inference",
    4: "single-hop",
    5: "adversarial",
}


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str
    session: int
    position: int
    occurred_at: datetime | None

    @property
    def content(self) -> str:
        content = f"{self.speaker}: {self.text}"
        if self.caption:
            content += f" [shared a photo: {self.caption}]"
        return content


@dataclass(frozen=True)
class Question:
    question: str
    evidence: tuple[str, ...]
    category: int
    # The question's language case where a set names it (`lang`: the bilingual sets' zh,
    # en->zh, zh->en, mixed, en); LoCoMo's own files name none.
    language: str = ""


@dataclass(frozen=True)
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]  # answerable, with evidence
    adversarial: list[Question]  # category 5: nothing said answers them


def parse_session_date(text: str | None) -> datetime | None:
    """'1:56 pm on 8 May, 2023' -> aware datetime (UTC); None when absent or unreadable."""
    if not text:
        return None
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


class NotLocomo(ValueError):
    """The data is not a LoCoMo-format conversation (the reason says what is missing)."""


def read_conversation(path: Path) -> Conversation:
    return parse_conversation(json.loads(path.read_text()), name=path.stem)


def parse_conversation(data: object, *, name: str) -> Conversation:
    """A LoCoMo-format conversation from its parsed JSON; NotLocomo when it is not one."""
    if not isinstance(data, dict):
        raise NotLocomo("the file is not a JSON object")
    conversation = data.get("conversation", data)
    if not isinstance(conversation, dict):
        raise NotLocomo("'conversation' is not an object")
    sessions = sorted(
        (int(match.group(1)), key)
        for key in conversation
        if (match := re.fullmatch(r"session_(\d+)", key)) and isinstance(conversation[key], list)
    )
    if not sessions:
        raise NotLocomo("no session_1, session_2, ... lists of turns")
    turns: list[Turn] = []
    for number, key in sessions:
        occurred_at = parse_session_date(conversation.get(f"{key}_date_time"))
        for position, turn in enumerate(conversation[key]):
            if not isinstance(turn, dict) or "dia_id" not in turn or "speaker" not in turn:
                raise NotLocomo(f"a turn of {key} has no dia_id or speaker")
            turns.append(
                Turn(
                    dia_id=str(turn["dia_id"]),
                    speaker=str(turn["speaker"]),
                    text=str(turn.get("text", "")),
                    caption=str(turn.get("blip_caption") or ""),
                    session=number,
                    position=position,
                    occurred_at=occurred_at,
                )
            )
    questions: list[Question] = []
    adversarial: list[Question] = []
    qa = data.get("qa", [])
    if not isinstance(qa, list):
        raise NotLocomo("'qa' is not a list")
    for item in qa:
        if not isinstance(item, dict) or not str(item.get("question") or "").strip():
            raise NotLocomo("a question has no text")
        try:
            category = int(item.get("category", 0))
        except (TypeError, ValueError):
            raise NotLocomo("a question's category is not a number") from None
        question = Question(
            question=str(item["question"]),
            # An entry may list several turns ("D8:6; D9:17"): each is evidence.
            evidence=tuple(
                part.strip()
                for entry in item.get("evidence") or []
                for part in str(entry).split(";")
                if part.strip()
            ),
            category=category,
            language=str(item.get("lang") or "")[:LANGUAGE_LIMIT],
        )
        if category == ADVERSARIAL:
            adversarial.append(question)
        # Questions without evidence cannot be scored for retrieval; they are left out.
        elif category in ANSWERABLE_CATEGORIES and question.evidence:
            questions.append(question)
    speakers = (str(conversation.get("speaker_a", "")), str(conversation.get("speaker_b", "")))
    return Conversation(
        name=name, speakers=speakers, turns=turns, questions=questions, adversarial=adversarial
    )


def conversation_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(path.glob("*.json"))
        else:
            yield path
