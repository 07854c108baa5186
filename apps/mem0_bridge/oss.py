"""A self-hosted Mem0 store read through Mem0's own package (`mem0ai`, the `mem0` extra), so
that every vector store it supports is read the way Mem0 reads it. Only the import command
imports this module, and it imports Mem0 only when called: the server never does.

Mem0's telemetry is switched off, and its home (`~/.mem0`) moved to a temporary folder
unless MEM0_DIR says where, before Mem0 is imported: Mem0 reads both at import.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Mapping
from typing import Any

from apps.mem0_bridge.records import BadRecord, Record, record_of

# Everything in the store, in one listing: Mem0's `list` takes a count, not a cursor.
LISTING_LIMIT = 10_000_000
# Fields of a stored point that are not its metadata (Mem0's own `get_all` leaves them out).
_CORE = {"data", "hash", "created_at", "updated_at", "id", "text_lemmatized", "attributed_to"}
_PROMOTED = ("user_id", "agent_id", "run_id", "actor_id", "role", "expiration_date")


class Mem0Missing(RuntimeError):
    """Mem0's package is not installed."""


def open_store(config: Mapping[str, Any]) -> Any:
    """A `mem0.Memory` over the store `config` describes (Mem0's own configuration)."""
    os.environ["MEM0_TELEMETRY"] = "false"
    os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-home-"))
    try:
        from mem0 import Memory  # type: ignore[import-untyped,unused-ignore]
    except ImportError as error:
        raise Mem0Missing(
            "Reading a Mem0 store needs Mem0's package (mem0ai): "
            "pip install 'memoryhub[mem0]', then run the import again."
        ) from error
    # Mem0 logs memory texts at INFO ("Updating memory with data=…"): never into our logs.
    logging.getLogger("mem0").setLevel(logging.WARNING)
    return Memory.from_config(dict(config))


def store_records(memory: Any) -> list[Record | BadRecord]:
    """Every memory of the store with its history (Mem0's history database), as Records;
    one that cannot be read is a BadRecord. Vectors are not read: MemoryHub embeds again."""
    listed = memory.vector_store.list(filters=None, top_k=LISTING_LIMIT)
    points = listed[0] if listed and isinstance(listed[0], list | tuple) else listed
    records: list[Record | BadRecord] = []
    for point in points or []:
        raw = _raw(point)
        try:
            history = memory.history(str(point.id))
        except Exception:
            history = []
        try:
            records.append(record_of(raw, history))
        except BadRecord as bad:
            records.append(bad)
    return records


def _raw(point: Any) -> dict[str, Any]:
    """A stored point in the shape of Mem0's `get_all` rows."""
    payload = dict(point.payload or {})
    raw: dict[str, Any] = {
        "id": str(point.id),
        "memory": payload.get("data", ""),
        "created_at": payload.get("created_at"),
        "updated_at": payload.get("updated_at"),
    }
    raw.update({key: payload[key] for key in _PROMOTED if key in payload})
    metadata = {k: v for k, v in payload.items() if k not in _CORE and k not in _PROMOTED}
    if metadata:
        raw["metadata"] = metadata
    return raw
