"""Reads for the Mem0-compatible API, within the namespace the key was authorised for."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet

from apps.mem0_bridge.models import ImportedMemory
from apps.mem0_bridge.records import Scope
from apps.memories import selectors as memory_selectors
from apps.memories.models import Memory, Status, Subject
from apps.namespaces.models import Namespace


def mem0_memories(*, namespace: Namespace, scope: Scope) -> QuerySet[Memory]:
    """What Mem0's `get_all` lists: the scope's current, active memories, newest first (a
    memory without a subject when the scope names no user)."""
    memories = memory_selectors.memory_list(
        namespace=namespace,
        subject_external_id=scope.user_id,
        status=Status.ACTIVE,
        metadata=scope.metadata,
        current=True,
    )
    return memories.order_by("-created_at", "-id")


def mem0_entities(*, namespace: Namespace) -> list[dict[str, Any]]:
    """The namespace's subjects as Mem0's users, with their memory counts, oldest first."""
    subjects = (
        Subject.objects.filter(namespace=namespace)
        .annotate(total_memories=Count("memories"))
        .order_by("created_at", "id")
    )
    return [
        {
            "id": str(subject.pk),
            "name": subject.external_id,
            "type": "user",
            "total_memories": subject.total_memories,
            "created_at": subject.created_at.isoformat(),
            "updated_at": subject.created_at.isoformat(),
            "owner": namespace.slug,
            "organization": namespace.slug,
            "metadata": None,
        }
        for subject in subjects
    ]


def imported_source_ids(*, namespace: Namespace, source_ids: list[str]) -> set[str]:
    """Which of these Mem0 ids were imported into the namespace before."""
    found = ImportedMemory.objects.filter(namespace=namespace, source_id__in=source_ids)
    return set(found.values_list("source_id", flat=True))
