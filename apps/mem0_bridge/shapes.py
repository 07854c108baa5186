"""MemoryHub's memories, versions and refusals in the shapes Mem0's client reads."""

from __future__ import annotations

import hashlib
from typing import Any

from apps.mem0_bridge.records import METADATA_IDS
from apps.memories.models import Memory, Subject
from apps.memories.selectors import OpenedMemory, OpenedVersion


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def memory_shape(opened: OpenedMemory) -> dict[str, Any]:
    """A memory as Mem0's platform returns one: `memory` is the text, the ids MemoryHub keeps
    in metadata come back as Mem0's fields, tags as categories. `hash` is Mem0's (MD5 of the
    text), computed for the answer only."""
    memory = opened.memory
    metadata = dict(memory.metadata or {})
    ids = {key: metadata.pop(key, None) for key in METADATA_IDS}
    if ids["run_id"] is None and memory.session_key:
        ids["run_id"] = memory.session_key
    subject = memory.subject if memory.subject_id else None
    return {
        "id": str(memory.id),
        "memory": opened.content,
        "user_id": subject.external_id if isinstance(subject, Subject) else None,
        **ids,
        "hash": hashlib.md5(opened.content.encode(), usedforsecurity=False).hexdigest(),
        "metadata": metadata or None,
        "categories": list(memory.tags),
        "immutable": False,
        "expiration_date": memory.expires_at.date().isoformat() if memory.expires_at else None,
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
    }


def history_shape(memory: Memory, versions: list[OpenedVersion]) -> list[dict[str, Any]]:
    """A memory's versions as Mem0's history, oldest first: the first an ADD, each later one
    an UPDATE from the text before it."""
    rows: list[dict[str, Any]] = []
    previous: str | None = None
    subject = memory.subject if memory.subject_id else None
    for opened in sorted(versions, key=lambda v: v.version.version):
        version = opened.version
        rows.append(
            {
                "id": f"{memory.id}-v{version.version}",
                "memory_id": str(memory.id),
                "input": None,
                "old_memory": previous,
                "new_memory": opened.content,
                "user_id": subject.external_id if isinstance(subject, Subject) else None,
                "event": "ADD" if previous is None else "UPDATE",
                "metadata": None,
                "created_at": _iso(version.created_at),
                "updated_at": _iso(version.created_at),
            }
        )
        previous = opened.content
    return rows
