"""What the caller sends, beyond plain values: TypedDicts, so dict literals type-check."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, TypedDict

from memoryhub_client.results import MemoryKind, MessageRole


class Unset(Enum):
    """The default of an update's nullable fields: leave as is (None clears them)."""

    UNSET = "unset"


UNSET = Unset.UNSET


class _TurnRequired(TypedDict):
    role: MessageRole
    content: str


class Turn(_TurnRequired, total=False):
    """One message of a conversation, as `messages` sends it."""

    name: str | None
    created_at: datetime | str | None


class RecallFilters(TypedDict, total=False):
    kind: list[MemoryKind]
    tags: list[str]
    since: datetime | str | None
    until: datetime | str | None
    metadata: dict[str, Any]


class MemorySource(TypedDict, total=False):
    app: str
    session: str
    message_ids: list[str]


class RecallOptions(TypedDict, total=False):
    k: int


class SectionOverride(TypedDict, total=False):
    priority: int
    max_tokens: int | None


class SectionOverrides(TypedDict, total=False):
    procedural: SectionOverride
    turns: SectionOverride
    memories: SectionOverride
    summary: SectionOverride
    shared: SectionOverride
