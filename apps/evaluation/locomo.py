"""Reading LoCoMo-format conversations (Maharana et al., 2024) into turns and questions."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ANSWERABLE_CATEGORIES = {1, 2, 3, 4}


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


@dataclass(frozen=True)
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]


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


def read_conversation(path: Path) -> Conversation:
    data = json.loads(path.read_text())
    conversation = data.get("conversation", data)
    sessions = sorted(
        (int(match.group(1)), key)
        for key in conversation
        if (match := re.fullmatch(r"session_(\d+)", key)) and isinstance(conversation[key], list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        occurred_at = parse_session_date(conversation.get(f"{key}_date_time"))
        for position, turn in enumerate(conversation[key]):
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
    questions = [
        Question(
            question=str(item["question"]),
            evidence=tuple(str(e) for e in item.get("evidence", [])),
            category=int(item["category"]),
        )
        for item in data.get("qa", [])
        # Questions without evidence cannot be scored for retrieval; they are left out.
        if int(item.get("category", 0)) in ANSWERABLE_CATEGORIES and item.get("evidence")
    ]
    speakers = (str(conversation.get("speaker_a", "")), str(conversation.get("speaker_b", "")))
    return Conversation(name=path.stem, speakers=speakers, turns=turns, questions=questions)


def conversation_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(path.glob("*.json"))
        else:
            yield path
