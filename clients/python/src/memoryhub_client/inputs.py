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
    """The recall call's options, as keywords of `Namespace.recall` and of the framework
    retrievers. One left out (or None) takes the server's default:

    - `k`: how many results (the namespace's recall configuration, 10 unless changed);
    - `filters`: only memories of these kinds, tags, times and metadata;
    - `include_shared`: also the namespace's shared memories (True);
    - `mmr`: diversify (maximal marginal relevance): 1 relevance only, 0 diversity only;
    - `min_relevance`: leave out results whose calibrated relevance (0..1) is below this, so
      a question about nothing stored gets none (the namespace's setting, off unless
      changed; 0.2 is the documented value);
    - `include_history`: also facts superseded or ended, marked `current` False and ranked
      below every current one (False);
    - `as_of`: time travel, what held at that moment (a timezone-aware datetime, or ISO 8601
      text with a timezone; not in the future): memories recorded and valid then, with the
      text they had then. What was erased, deleted or archived since stays out."""

    # MemoryHub's tests hold these names to the recall API's fields and the MCP tool's.
    k: int | None
    filters: RecallFilters | None
    include_shared: bool | None
    mmr: float | None
    min_relevance: float | None
    include_history: bool | None
    as_of: datetime | str | None


class ContextRecallOptions(TypedDict, total=False):
    """What the context call's recall takes: `k`, the memories recalled (20)."""

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
