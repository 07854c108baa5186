"""The audit hash chains, as pure functions (no Django): canonical form, link hash, verify.

Events form one chain per namespace, plus a global chain for events with no namespace
(logins, users, keys across namespaces): appends in different namespaces never wait for each
other, and within a namespace the order is total. An install from before chains per
namespace keeps its single chain as the *sealed* chain: its final event seals it, and the
first event of every newer chain carries that final event's hash instead of the genesis, so
the whole history verifies end to end.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

GENESIS = "0" * 64

GLOBAL_CHAIN = 0  # events with no namespace; every other chain is keyed by its namespace's id
SEALED_CHAIN = -1  # the single chain of an install from before chains per namespace
SEAL_ACTION = "audit.chain_sealed"

# The fields that a link's hash covers, in order. `hash` itself is excluded. `chain` is not
# covered (the sealed chain's events were hashed before it existed): the walk checks it
# against the namespace id, which is.
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


def chain_of(namespace_id: int | None) -> int:
    """The chain an event appended now links into."""
    return GLOBAL_CHAIN if namespace_id is None else namespace_id


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
    chain: int | None = None


@dataclass
class Walk:
    """Checks events handed to it in id order, each against the previous link of its chain.

    `previous` holds each chain's newest checked hash; a chain not in it starts at `start`:
    the sealed chain's final hash on an install that sealed one, else the genesis (the sealed
    chain itself always starts at the genesis). `seal_id` is that final event's id: events up
    to it belong to the sealed chain, events after it to their namespace's chain.
    """

    start: str = GENESIS
    seal_id: int | None = None
    previous: dict[int, str] = field(default_factory=dict)
    checked: int = 0

    def step(self, event: Mapping[str, Any]) -> BrokenLink | None:
        """Check one event and move its chain on; the broken link, if it is one."""
        key = event["chain"]
        if key != self._expected_chain(event):
            return BrokenLink(event["id"], "the event is not in its namespace's chain", key)
        before = self.previous.get(key, GENESIS if key == SEALED_CHAIN else self.start)
        if event["prev_hash"] != before:
            return BrokenLink(event["id"], "prev_hash does not match the previous event", key)
        if link_hash(event) != event["hash"]:
            return BrokenLink(event["id"], "hash does not match the event's fields", key)
        self.previous[key] = event["hash"]
        self.checked += 1
        return None

    def _expected_chain(self, event: Mapping[str, Any]) -> int:
        if self.seal_id is not None and event["id"] <= self.seal_id:
            return SEALED_CHAIN
        return chain_of(event["namespace_id"])


def verify(
    events: Iterable[Mapping[str, Any]], *, start: str = GENESIS, seal_id: int | None = None
) -> tuple[int, BrokenLink | None]:
    """Walk events in id order; return (links checked, first broken link or None).

    A link is broken when its stored hash does not match its fields (edited), when its
    prev_hash is not the hash of the previous event of its chain (deleted, inserted or
    reordered rows), or when it sits in another chain than its namespace's.
    """
    walk = Walk(start=start, seal_id=seal_id)
    for event in events:
        if (broken := walk.step(event)) is not None:
            return walk.checked, broken
    return walk.checked, None
