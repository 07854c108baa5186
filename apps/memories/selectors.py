"""Reads of subjects and memories, always within a namespace the caller was authorised for.

A memory or subject outside that namespace is NotFound, exactly like one that never existed.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.memories.models import VECTOR_FIELDS, Kind, Memory, MemoryVersion, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory, open_version
from apps.namespaces.models import Namespace
from memoryhub.exceptions import ApplicationError, NotFound


def subject_get(*, namespace: Namespace, external_id: str) -> Subject:
    """A subject of the namespace by the app's id (from a URL: checked here, as a body's is
    by its serializer); NotFound when there is none."""
    if "\x00" in external_id:
        raise ApplicationError(
            gettext_noop("A subject id cannot contain NUL characters."),
            details={"external_id": ["Null characters are not allowed."]},
        )
    subject = Subject.objects.filter(namespace=namespace, external_id=external_id).first()
    if subject is None:
        raise NotFound(gettext_noop("Subject not found."))
    subject.namespace = namespace
    return subject


def subject_state(*, subject: Subject) -> dict[str, Any]:
    return {
        "external_id": subject.external_id,
        "paused": subject.paused,
        "created_at": subject.created_at,
        "memories": Memory.objects.filter(
            namespace_id=subject.namespace_id, subject=subject
        ).count(),
    }


def memory_list(
    *,
    namespace: Namespace,
    subject_external_id: str | None = None,
    kind: str | None = None,
    tag: str | None = None,
    status: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    metadata: dict[str, Any] | None = None,
    current: bool = False,
) -> QuerySet[Memory]:
    """The namespace's memories, narrowed by each filter given: `metadata` holds these keys
    and values; `current` leaves out what ended (superseded, or ended by a reviewer)."""
    memories = Memory.objects.filter(namespace=namespace).select_related("subject")
    if metadata:
        memories = memories.filter(metadata__contains=metadata)
    if current:
        memories = memories.filter(valid_to__isnull=True)
    if subject_external_id is not None:
        memories = memories.filter(subject__external_id=subject_external_id)
    if kind:
        memories = memories.filter(kind=kind)
    if tag:
        memories = memories.filter(tags__contains=[tag])
    if status:
        memories = memories.filter(status=status)
    if since:
        memories = memories.filter(created_at__gte=since)
    if until:
        memories = memories.filter(created_at__lt=until)
    return memories


def memory_get(*, namespace: Namespace, memory_id: uuid.UUID | str) -> Memory:
    try:
        memory_uuid = uuid.UUID(str(memory_id))
    except ValueError:
        raise NotFound(gettext_noop("Memory not found.")) from None
    memory = (
        Memory.objects.filter(namespace=namespace, pk=memory_uuid).select_related("subject").first()
    )
    if memory is None:
        raise NotFound(gettext_noop("Memory not found."))
    memory.namespace = namespace
    return memory


def memory_versions(*, memory: Memory) -> QuerySet[MemoryVersion]:
    return MemoryVersion.objects.filter(memory=memory).order_by("-version")


@dataclass(frozen=True)
class OpenedMemory:
    """A memory with its content decrypted, for a response or a page to show."""

    memory: Memory
    content: str


@dataclass(frozen=True)
class OpenedVersion:
    version: MemoryVersion
    content: str


def memories_open(
    memories: Iterable[Memory], *, keys: KeyCache | None = None
) -> list[OpenedMemory]:
    """The memories with their content decrypted (each data key unwrapped once)."""
    keys = keys or KeyCache()
    return [OpenedMemory(memory, open_memory(keys, memory)) for memory in memories]


def memory_versions_open(*, memory: Memory, keys: KeyCache | None = None) -> list[OpenedVersion]:
    """A memory's earlier contents, newest first, decrypted."""
    keys = keys or KeyCache()
    return [
        OpenedVersion(version, open_version(keys, version, memory.subject_id, memory.namespace_id))
        for version in memory_versions(memory=memory)
    ]


def memory_public_fields(memory: Memory) -> dict[str, Any]:
    """The non-secret fields of a memory as JSON-ready values (never the embedding): the one
    shape of a memory that the API, exports and pages share, without content and subject."""

    def iso(value: datetime | None) -> str | None:
        return value.isoformat() if value else None

    return {
        "id": str(memory.id),
        "kind": memory.kind,
        "tags": list(memory.tags),
        "metadata": memory.metadata,
        "importance": memory.importance,
        "confidence": memory.confidence,
        "source": memory.source,
        "status": memory.status,
        "version": memory.version,
        "occurred_at": iso(memory.occurred_at),
        "created_at": iso(memory.created_at),
        "updated_at": iso(memory.updated_at),
        "valid_from": iso(memory.valid_from),
        "valid_to": iso(memory.valid_to),
        "superseded_by": str(memory.superseded_by_id) if memory.superseded_by_id else None,
        "expires_at": iso(memory.expires_at),
    }


def procedural_memories(
    *, namespace: Namespace, subject: Subject | None, limit: int
) -> tuple[list[Memory], list[tuple[uuid.UUID, dict[str, int]]]]:
    """The instructions that apply now (the subject's procedural memories and the shared
    ones), the `limit` most important first; and (id, prompt tokens) of the next 19 x `limit`
    of the others, which a prompt leaves out."""
    owners = Memory.objects.filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
        Q(subject__isnull=True) | Q(subject=subject),
        namespace=namespace,
        kind=Kind.PROCEDURAL,
        status=Status.ACTIVE,
        valid_to__isnull=True,
    )
    ordered = owners.order_by("-importance", "created_at")
    memories = list(ordered.defer(*VECTOR_FIELDS)[:limit])
    for memory in memories:
        memory.namespace = namespace
    overflow = list(ordered.values_list("id", "prompt_tokens")[limit : limit * 20])
    return memories, overflow


@dataclass(frozen=True)
class MemoryNaming:
    """What names a memory in a list of events: its kind and whose it is."""

    namespace_id: int
    kind: str
    subject_id: uuid.UUID | None  # None: shared by the namespace


def memory_namings(ids: Collection[str]) -> dict[str, MemoryNaming]:
    """The memories with these ids (as text; ids that are not UUIDs are skipped), by id as
    text; a deleted one is absent. For naming memories in lists the caller has already
    scoped (the audit viewer's events). One query, by the primary key."""
    valid = []
    for raw in ids:
        try:
            valid.append(uuid.UUID(raw))
        except ValueError:
            continue
    if not valid:
        return {}
    found = Memory.objects.filter(pk__in=valid).values_list(
        "pk", "namespace_id", "kind", "subject_id"
    )
    return {str(pk): MemoryNaming(ns, kind, subject) for pk, ns, kind, subject in found}


def subject_suggestions(
    *, namespace_ids: Collection[int], prefix: str, limit: int = 10
) -> list[str]:
    """Up to `limit` external ids of the namespaces' subjects that start with `prefix`, in
    order (the audit viewer's suggestions; the caller has checked the viewer may see them)."""
    if not namespace_ids or "\x00" in prefix:
        return []
    found = (
        Subject.objects.filter(namespace_id__in=list(namespace_ids), external_id__startswith=prefix)
        .order_by("external_id")
        .values_list("external_id", flat=True)
        .distinct()[:limit]
    )
    return list(found)


def subject_ids_by_external_id(
    *, namespace_ids: Collection[int], external_id: str
) -> list[uuid.UUID]:
    """The ids of the namespaces' subjects known by `external_id` (one a namespace)."""
    if not namespace_ids or "\x00" in external_id:
        return []
    return list(
        Subject.objects.filter(
            namespace_id__in=list(namespace_ids), external_id=external_id
        ).values_list("pk", flat=True)
    )


def subject_external_ids(ids: Collection[uuid.UUID]) -> dict[str, str]:
    """The external ids the subjects with these ids go by (subject id as text -> external id);
    an erased subject is absent. For naming subjects in lists the caller has already scoped
    (the audit viewer's events)."""
    found = Subject.objects.filter(pk__in=list(ids)).values_list("pk", "external_id")
    return {str(pk): external_id for pk, external_id in found}
