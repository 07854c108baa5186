"""The audit hash chain, as pure functions (no Django): canonical form, link hash, verify."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

GENESIS = "0" * 64

# The fields that a link's hash covers, in order. `hash` itself is excluded.
CHAINED_FIELDS = (
    "id",
    "created_at",
    "actor_type",
    "actor_id",
    "actor_name",
    "action",
    "namespace_id",
    "namespace_slug",
    "subject_id",
    "object_type",
    "object_id",
    "request_id",
    "ip",
    "outcome",
    "details",
    "prev_hash",
)


def canonical(event: Mapping[str, Any]) -> bytes:
    """Canonical JSON of the chained fields: sorted keys, no whitespace, str() for the rest."""
    body = {name: event[name] for name in CHAINED_FIELDS}
    return json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


def link_hash(event: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(event)).hexdigest()


@dataclass(frozen=True)
class BrokenLink:
    event_id: int
    reason: str


def verify(events: Iterable[Mapping[str, Any]]) -> tuple[int, BrokenLink | None]:
    """Walk events in id order; return (links checked, first broken link or None).

    A link is broken when its stored hash does not match its fields (edited), or when its
    prev_hash is not the previous event's hash (deleted, inserted or reordered rows).
    """
    previous = GENESIS
    checked = 0
    for event in events:
        if event["prev_hash"] != previous:
            return checked, BrokenLink(event["id"], "prev_hash does not match the previous event")
        if link_hash(event) != event["hash"]:
            return checked, BrokenLink(event["id"], "hash does not match the event's fields")
        previous = event["hash"]
        checked += 1
    return checked, None
