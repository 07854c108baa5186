"""Mem0's shapes read without Django: the scope a request names (user, agent, run, app and
metadata filters), the records of an export, and a Python-repr filter parsed safely.

Mem0 names who a memory is about with four ids. MemoryHub keeps `user_id` as the subject;
`agent_id`, `run_id` and `app_id` go into the memory's metadata (filterable there), and
`run_id` is the memory's session as well.
"""

from __future__ import annotations

import ast
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

ENTITY_IDS = ("user_id", "agent_id", "run_id", "app_id")
# The ids kept in metadata, under their own names.
METADATA_IDS = ("agent_id", "run_id", "app_id")
MAX_ID_LENGTH = 255
MAX_REPR_CHARACTERS = 4096
MAX_REPR_DEPTH = 8


class Unsupported(ValueError):
    """A Mem0 request MemoryHub cannot honour, with a message saying what to do instead."""


@dataclass(frozen=True)
class Scope:
    """Whose memories a request means: the subject (`user_id`) and the metadata the others
    became. Empty: every memory of the namespace."""

    user_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def run_id(self) -> str | None:
        value = self.metadata.get("run_id")
        return str(value) if value is not None else None


def _entity(name: str, value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise Unsupported(f"{name} must be a non-empty string.")
    if len(value) > MAX_ID_LENGTH:
        raise Unsupported(f"{name} has at most {MAX_ID_LENGTH} characters.")
    return value.strip()


def _conditions(filters: Any) -> Iterator[tuple[str, Any]]:
    """(key, value) of a filter dict, an "AND" list's dicts flattened into it."""
    if filters is None:
        return
    if not isinstance(filters, Mapping):
        raise Unsupported("filters must be an object.")
    for key, value in filters.items():
        if key == "AND":
            if not isinstance(value, list):
                raise Unsupported("filters' AND must be a list of objects.")
            for part in value:
                yield from _conditions(part)
        elif key in ("OR", "NOT"):
            raise Unsupported(
                f"MemoryHub does not support {key} in filters: only equality on user_id, "
                "agent_id, run_id, app_id and metadata, joined by AND."
            )
        else:
            yield str(key), value


def scope_of(filters: Any = None, top_level: Mapping[str, Any] | None = None) -> Scope:
    """The scope of a request's `filters` (Mem0's v3 form) and its top-level ids (the older
    form, which `add` and `delete_all` still send); the same id given twice must agree."""
    found: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    pairs = list(_conditions(filters))
    pairs += [(key, value) for key, value in (top_level or {}).items() if value is not None]
    for key, value in pairs:
        if key == "metadata":
            if not isinstance(value, Mapping):
                raise Unsupported("filters' metadata must be an object.")
            metadata.update(_equalities("metadata", value))
            continue
        if key not in ENTITY_IDS:
            if key in ("categories", "created_at", "updated_at", "keywords", "memory_ids"):
                raise Unsupported(f"MemoryHub does not filter on {key} through this API.")
            raise Unsupported(f"Unknown filter {key!r}.")
        if isinstance(value, Mapping):
            raise Unsupported(f"MemoryHub filters {key} by equality only.")
        if value == "*":
            raise Unsupported(f"MemoryHub does not support {key}='*': leave {key} out.")
        value = _entity(key, value)
        if found.get(key, value) != value:
            raise Unsupported(f"{key} is given twice with different values.")
        found[key] = value
    metadata.update({key: found[key] for key in METADATA_IDS if key in found})
    return Scope(user_id=found.get("user_id"), metadata=metadata)


def _equalities(where: str, values: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in values.items():
        if isinstance(value, Mapping | list):
            raise Unsupported(f"MemoryHub filters {where} by equality on plain values only.")
        if not isinstance(key, str):
            raise Unsupported(f"{where}'s keys must be strings.")
    return dict(values)


def filters_from_repr(text: str) -> Any:
    """The `filters=` query parameter Mem0's `delete_all` sends: the Python repr of a dict,
    read as a literal (never evaluated), within bounds of size and depth."""
    if len(text) > MAX_REPR_CHARACTERS:
        raise Unsupported(f"filters is longer than {MAX_REPR_CHARACTERS} characters.")
    depth = deepest = 0
    for character in text:
        depth += character in "{[("
        depth -= character in "}])"
        deepest = max(deepest, depth)
    if deepest > MAX_REPR_DEPTH:
        raise Unsupported("filters is nested too deeply.")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise Unsupported("filters is not a dict literal.") from None
    if not isinstance(value, dict):
        raise Unsupported("filters is not a dict literal.")
    return value


# --- records of an export or a store ---------------------------------------------------------


class BadRecord(ValueError):
    """A record that cannot be imported: reported with its id, and skipped."""

    def __init__(self, record_id: str, reason: str) -> None:
        super().__init__(f"{record_id or '(no id)'}: {reason}")
        self.record_id = record_id
        self.reason = reason


@dataclass(frozen=True)
class HistoryEntry:
    """One change of a Mem0 memory, oldest first: its text after the change, and when."""

    event: str
    text: str
    at: datetime | None


@dataclass(frozen=True)
class Record:
    """One Mem0 memory as MemoryHub will store it."""

    source_id: str
    text: str
    user_id: str | None
    session: str
    metadata: dict[str, Any]
    tags: list[str]
    created_at: datetime | None
    updated_at: datetime | None
    expires_at: datetime | None
    history: tuple[HistoryEntry, ...] = ()
    # The id its memory will have, chosen before it is stored (by the importer).
    memory_id: uuid.UUID | None = None


def records_of_export(data: Any) -> Iterator[Any]:
    """The memory objects of what Mem0's `get_all` returned, in any of its forms: a list
    (v1), {"results": [...]} (v2), {count, next, previous, results} (v3, paginated), or a
    list of such pages."""
    if isinstance(data, Mapping):
        if "results" not in data:
            raise ValueError("no 'results' in the file: not a Mem0 get_all answer")
        data = data["results"]
        if not isinstance(data, list):
            raise ValueError("'results' is not a list")
        yield from data
        return
    if not isinstance(data, list):
        raise ValueError("neither a list nor an object with 'results'")
    for item in data:
        if isinstance(item, Mapping) and "results" in item and "memory" not in item:
            yield from records_of_export(item)
        else:
            yield item


def parse_time(value: Any) -> datetime | None:
    """A Mem0 timestamp (ISO 8601, with or without a zone; or Unix seconds) as an aware UTC
    datetime; None when absent. Naive times are Mem0's UTC (its `datetime.now(pytz.UTC)`
    or its platform's `Z`)."""
    if value in (None, ""):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC)
    if not isinstance(value, str):
        raise ValueError(f"not a time: {type(value).__name__}")
    text = value.strip().replace("Z", "+00:00")
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def record_of(raw: Any, history: list[Mapping[str, Any]] | None = None) -> Record:
    """A Mem0 memory object (and its history rows, if the store kept them) as a Record;
    BadRecord naming why not."""
    if not isinstance(raw, Mapping):
        raise BadRecord("", "not an object")
    source_id = raw.get("id")
    if not isinstance(source_id, str | int) or not str(source_id).strip():
        raise BadRecord("", "no id")
    source_id = str(source_id).strip()[:255]
    text = raw.get("memory", raw.get("text"))
    if not isinstance(text, str) or not text.strip():
        raise BadRecord(source_id, "no text in 'memory'")
    metadata = raw.get("metadata")
    metadata = {} if metadata is None else metadata
    if not isinstance(metadata, Mapping):
        raise BadRecord(source_id, "metadata is not an object")
    try:
        scope = scope_of(None, {key: raw.get(key) for key in ENTITY_IDS})
        created_at = parse_time(raw.get("created_at"))
        updated_at = parse_time(raw.get("updated_at"))
        expires_at = parse_time(raw.get("expiration_date"))
        entries = tuple(_history(history or []))
    except (Unsupported, ValueError, OverflowError) as error:
        raise BadRecord(source_id, str(error)) from None
    return Record(
        source_id=source_id,
        text=text,
        user_id=scope.user_id,
        session=scope.run_id or "",
        metadata={**metadata, **scope.metadata},
        tags=_tags(raw.get("categories")),
        created_at=created_at,
        updated_at=updated_at or created_at,
        expires_at=expires_at,
        history=entries,
    )


def _tags(categories: Any) -> list[str]:
    if not isinstance(categories, list):
        return []
    return sorted({str(c).strip()[:64] for c in categories if str(c).strip()})


def _history(rows: list[Mapping[str, Any]]) -> Iterator[HistoryEntry]:
    """Mem0's history rows (memory_id, old_memory, new_memory, event, created_at,
    updated_at), oldest first: the texts the memory had, each from when it was written (an
    UPDATE row keeps the memory's `created_at` and says its own time in `updated_at`). A
    deletion ends the memory, so such a memory is not in a store's listing and never reaches
    here."""

    def written(row: Mapping[str, Any]) -> str:
        if str(row.get("event") or "").upper() == "ADD":
            return str(row.get("created_at") or "")
        return str(row.get("updated_at") or row.get("created_at") or "")

    for row in sorted(rows, key=written):
        event = str(row.get("event") or "").upper()
        text = row.get("new_memory")
        if event in ("ADD", "UPDATE") and isinstance(text, str) and text.strip():
            yield HistoryEntry(event=event, text=text, at=parse_time(written(row)))
