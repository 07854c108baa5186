"""Writes of recall: the recall log (which memories were served to whom)."""

from __future__ import annotations

import uuid

from apps.audit.actors import Actor
from apps.memories.models import Subject
from apps.namespaces.models import Namespace
from apps.recall.models import RecallLog


def recall_log_create(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject | None,
    memory_ids: list[uuid.UUID],
    purpose: str,
    duration_ms: float | None = None,
    tokens: int | None = None,
) -> RecallLog:
    """Record which memories were served to whom (ids only; no query, no content). Not an
    audit event: reads are accounted here, at the memory level, erased with the subject."""
    return RecallLog.objects.create(
        namespace=namespace,
        subject=subject,
        purpose=purpose,
        actor_type=actor.type,
        actor_id=actor.id,
        request_id=actor.request_id,
        memory_ids=memory_ids,
        duration_ms=duration_ms,
        tokens=tokens,
    )
