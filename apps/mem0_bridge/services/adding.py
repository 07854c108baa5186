"""Mem0's `add`, answered by the services MemoryHub's own API calls: turns through the write
pipeline (with inference), or memories stored as given (`infer=False`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from apps.audit.actors import Actor
from apps.mem0_bridge.records import Scope, Unsupported
from apps.memories.services import NewMemory, memories_create_bulk
from apps.namespaces.models import Namespace
from apps.pipeline import ingestion

# The session of turns sent without a run_id: one conversation per user, as Mem0 keeps them.
DEFAULT_SESSION = "mem0"


@dataclass(frozen=True)
class Mem0Add:
    """One `add` of Mem0's client: its messages, for whom, and how."""

    scope: Scope
    messages: list[ingestion.IncomingMessage]
    infer: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)
    occurred_at: datetime | None = None
    expires_at: datetime | None = None


def mem0_memories_add(
    *,
    actor: Actor,
    namespace: Namespace,
    request: Mem0Add,
    take_work: Callable[[int], None],
) -> list[dict[str, Any]]:
    """Store an `add` and answer with what is stored now, in Mem0's shape ({id, event,
    memory} each). With inference, the messages are turns of the run's session (or of one
    session per user), whose facts the write pipeline extracts afterwards, as for
    `POST /messages`; the answer lists the turns. Without, each message's content is a
    memory, as for `POST /memories`: one audit event for the batch. `take_work` takes the
    items to embed from the key's quota (and may refuse)."""
    scope = request.scope
    if request.infer:
        if scope.user_id is None:
            raise Unsupported(
                "MemoryHub keeps conversations per user: add with inference needs a user_id "
                "(or send infer=False to store the messages as shared memories)."
            )
        job, _replayed = ingestion.messages_ingest(
            actor=actor,
            namespace=namespace,
            subject_external_id=scope.user_id,
            session_external_id=scope.run_id or DEFAULT_SESSION,
            messages=request.messages,
            extract=True,
            take_work=take_work,
        )
        stored = job.payload.get("messages", [])
        return [
            {"id": message_id, "event": "ADD", "memory": message.content, "role": message.role}
            for message_id, message in zip(stored, request.messages, strict=False)
        ]
    take_work(len(request.messages))
    metadata = {**request.metadata, **scope.metadata}
    items = [
        NewMemory(
            content=message.content,
            subject_external_id=scope.user_id,
            metadata=metadata,
            source={"app": "mem0", **({"session": scope.run_id} if scope.run_id else {})},
            session_key=scope.run_id or "",
            occurred_at=request.occurred_at,
            expires_at=request.expires_at,
        )
        for message in request.messages
    ]
    memories = memories_create_bulk(actor=actor, namespace=namespace, items=items)
    return [
        {"id": str(memory.id), "event": "ADD", "memory": item.content}
        for memory, item in zip(memories, items, strict=True)
    ]
