"""What the frameworks' retrievers share: one recall, sync or async, and the metadata a
recalled memory carries into a framework's document or node."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from memoryhub_client.async_client import AsyncNamespace
from memoryhub_client.inputs import RecallOptions
from memoryhub_client.integrations._namespaces import AnyNamespace, synchronous
from memoryhub_client.results import RecallHit, RecallResponse


def recall(
    namespace: AnyNamespace,
    query: str,
    *,
    subject: str | None,
    options: RecallOptions,
    call: str,
) -> RecallResponse:
    return synchronous(namespace, call).recall(query, subject=subject, **options)


async def arecall(
    namespace: AnyNamespace, query: str, *, subject: str | None, options: RecallOptions
) -> RecallResponse:
    if isinstance(namespace, AsyncNamespace):
        return await namespace.recall(query, subject=subject, **options)
    return await asyncio.to_thread(lambda: namespace.recall(query, subject=subject, **options))


def hit_metadata(hit: RecallHit, recall_id: str | None) -> dict[str, Any]:
    """A recalled memory's metadata, JSON-ready: its id, kind and subject, its score, the
    calibrated relevance (0..1) and the score's components, the recall's id (for
    `Namespace.feedback`), and its validity: `current` (False for history, asked for with
    `include_history`), `valid_from`, `valid_to` and `superseded_by`."""
    memory = hit.memory
    return {
        "memory_id": memory.id,
        "kind": memory.kind,
        "subject": memory.subject,
        "tags": list(memory.tags),
        "score": hit.score,
        "relevance": hit.relevance,
        "components": dataclasses.asdict(hit.components),
        "recall_id": recall_id,
        "version": memory.version,
        "created_at": memory.created_at.isoformat(),
        "occurred_at": memory.occurred_at.isoformat() if memory.occurred_at else None,
        "current": hit.current,
        "valid_from": memory.valid_from.isoformat(),
        "valid_to": memory.valid_to.isoformat() if memory.valid_to else None,
        "superseded_by": memory.superseded_by,
        "memory_metadata": dict(memory.metadata),
    }
