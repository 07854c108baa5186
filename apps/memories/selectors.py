"""Reads of subjects and memories, always within a namespace the caller was authorised for.

A memory or subject outside that namespace is NotFound, exactly like one that never existed.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db.models import QuerySet

from apps.accounts.models import ApiKey
from apps.memories.models import Job, Memory, MemoryVersion, Subject
from apps.namespaces.models import Namespace
from memoryhub.exceptions import NotFound


def subject_get(*, namespace: Namespace, external_id: str) -> Subject:
    subject = Subject.objects.filter(namespace=namespace, external_id=external_id).first()
    if subject is None:
        raise NotFound("Subject not found.")
    subject.namespace = namespace
    return subject


def memory_list(
    *,
    namespace: Namespace,
    subject_external_id: str | None = None,
    kind: str | None = None,
    tag: str | None = None,
    status: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[Memory]:
    memories = Memory.objects.filter(namespace=namespace).select_related("subject")
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
        raise NotFound("Memory not found.") from None
    memory = (
        Memory.objects.filter(namespace=namespace, pk=memory_uuid).select_related("subject").first()
    )
    if memory is None:
        raise NotFound("Memory not found.")
    memory.namespace = namespace
    return memory


def memory_versions(*, memory: Memory) -> QuerySet[MemoryVersion]:
    return MemoryVersion.objects.filter(memory=memory).order_by("-version")


def job_for_api_key(*, api_key: ApiKey, job_id: uuid.UUID | str) -> Job:
    """A job in one of the key's namespaces; anything else is not found."""
    try:
        job_uuid = uuid.UUID(str(job_id))
    except ValueError:
        raise NotFound("Job not found.") from None
    job = (
        Job.objects.filter(pk=job_uuid, namespace__in=api_key.namespaces.all())
        .select_related("namespace", "subject")
        .first()
    )
    if job is None:
        raise NotFound("Job not found.")
    return job
