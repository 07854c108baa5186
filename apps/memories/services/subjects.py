"""Writes for subjects: created on first use, paused, exported, erased (crypto-shredded).

Every function is keyword-only and writes its audit event in its own transaction.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.audit import listeners as audit_listeners
from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories.models import (
    DataKey,
    Memory,
    MemoryVersion,
    Subject,
)
from apps.memories.row_encryption import (
    KeyCache,
    data_key_create,
    open_memory,
    open_version,
)
from apps.memories.selectors import memory_public_fields
from apps.memories.tasks import vacuum_data_keys
from apps.namespaces.models import Namespace
from memoryhub import erasure_ledger, metrics
from memoryhub.replica import reading_from_replica
from memoryhub.tasks import after_commit

EXPORT_SCHEMA_ID = "/api/v1/schemas/subject-export-v1.json"

# Parts of a subject's export kept by the apps above the store (their conversations, say):
# each registers, from its AppConfig.ready(), a function giving its part of the document.
ExportPart = Callable[[KeyCache, Subject], Any]
_export_parts: dict[str, ExportPart] = {}


def subject_export_part_register(*, name: str, part: ExportPart) -> None:
    """Add `name` to every subject export, built by `part(keys, subject)` (decrypted)."""
    _export_parts[name] = part


def subject_get_or_create(*, actor: Actor, namespace: Namespace, external_id: str) -> Subject:
    """The subject with this external id, created (with its data key) on first use."""
    subject = Subject.objects.filter(namespace=namespace, external_id=external_id).first()
    if subject is not None:
        return subject
    try:
        with transaction.atomic():
            subject = Subject.objects.create(namespace=namespace, external_id=external_id)
            data_key_create(namespace=namespace, subject=subject)
            audit_record(
                actor=actor,
                action="subject.create",
                namespace=namespace,
                subject_id=subject.pk,
                object_type="subject",
                object_id=str(subject.pk),
            )
    except IntegrityError:  # created concurrently by another request: use theirs
        return Subject.objects.get(namespace=namespace, external_id=external_id)
    return subject


def subject_set_paused(*, actor: Actor, subject: Subject, paused: bool) -> Subject:
    with transaction.atomic():
        Subject.objects.filter(pk=subject.pk).update(paused=paused)
        subject.paused = paused
        audit_record(
            actor=actor,
            action="subject.pause" if paused else "subject.resume",
            namespace=subject.namespace,
            subject_id=subject.pk,
            object_type="subject",
            object_id=str(subject.pk),
        )
    return subject


def subject_export(*, actor: Actor, subject: Subject) -> dict[str, Any]:
    """Everything stored about a subject, decrypted, as a document valid against the schema.
    Read from the replica when it may serve the request (memoryhub/replica.py), then audited
    (`subject.export`, with the counts) on the primary."""
    namespace = subject.namespace  # the primary's: a lagging replica may not have it yet
    document = reading_from_replica(lambda: _export_document(subject))
    audit_record(
        actor=actor,
        action="subject.export",
        namespace=namespace,
        subject_id=subject.pk,
        object_type="subject",
        object_id=str(subject.pk),
        details={
            "memories": len(document["memories"]),
            "versions": sum(len(memory["versions"]) for memory in document["memories"]),
        },
    )
    return document


def _export_document(subject: Subject) -> dict[str, Any]:
    keys = KeyCache()
    memories = list(Memory.objects.filter(subject=subject).order_by("created_at", "id"))
    versions: dict[uuid.UUID, list[MemoryVersion]] = {}
    for version in MemoryVersion.objects.filter(memory__subject=subject).order_by("version"):
        versions.setdefault(version.memory_id, []).append(version)
    document = {
        "$schema": EXPORT_SCHEMA_ID,
        "namespace": subject.namespace.slug,
        "subject": {
            "external_id": subject.external_id,
            "paused": subject.paused,
            "created_at": subject.created_at.isoformat(),
        },
        "exported_at": timezone.now().isoformat(),
        "memories": [
            {
                **memory_public_fields(memory),
                "content": open_memory(keys, memory),
                "versions": [
                    {
                        "version": version.version,
                        "content": open_version(keys, version, subject.pk, subject.namespace_id),
                        "changed_by": version.changed_by,
                        "reason": version.reason,
                        "created_at": version.created_at.isoformat(),
                    }
                    for version in versions.get(memory.id, [])
                ],
            }
            for memory in memories
        ],
        **{name: part(keys, subject) for name, part in _export_parts.items()},
    }
    return document


@dataclass(frozen=True)
class ErasureReceipt:
    subject_id: str
    subject_fingerprint: str
    memories_deleted: int
    versions_deleted: int
    data_keys_destroyed: int
    erased_at: str
    receipt_hash: str
    audit_event_id: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def subject_erase(*, actor: Actor, subject: Subject, via: str) -> ErasureReceipt:
    """Crypto-shred and delete a subject: destroy its data key, delete its memories, versions
    and the subject row, and append a content-free receipt (counts, hashes, time) to the log.
    Counted after the commit (`memoryhub_erasures_total`, labelled `via`: one of
    metrics.ERASED_VIA; its memories in `memoryhub_purged_memories_total{via="erasure"}`).

    Afterwards no plaintext or decryptable ciphertext of the subject remains in the database.
    """
    keys = KeyCache()
    namespace = subject.namespace
    with transaction.atomic():
        subject = Subject.objects.select_for_update().get(pk=subject.pk)
        fingerprint = keys.subject_fingerprint(namespace.pk, subject.external_id)
        memories = Memory.objects.filter(subject=subject)
        body: dict[str, Any] = {  # the fields of ErasureReceipt but the last two
            "subject_id": str(subject.pk),
            "subject_fingerprint": fingerprint,
            "memories_deleted": memories.count(),
            "versions_deleted": MemoryVersion.objects.filter(memory__subject=subject).count(),
            "data_keys_destroyed": DataKey.objects.filter(subject=subject).count(),
            "erased_at": timezone.now().isoformat(),
        }
        receipt_hash = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        # In the ledger before the commit: a restore of an older backup erases it again.
        erasure_ledger.append(
            namespace_id=namespace.pk, scope="subject", subject=fingerprint, receipt=receipt_hash
        )
        # The key goes first: whatever else might survive is undecryptable from here on.
        DataKey.objects.filter(subject=subject).delete()
        MemoryVersion.objects.filter(memory__subject=subject).delete()
        memories.delete()
        subject_id = subject.pk
        external_id = subject.external_id
        subject.delete()
        # The external id never enters the log; its listeners (webhooks to endpoints allowed
        # to receive it) may take it, in this transaction only.
        with audit_listeners.private(external_id=external_id, via=via):
            event = audit_record(
                actor=actor,
                action="subject.erase",
                namespace=namespace,
                subject_id=subject_id,
                object_type="subject",
                object_id=str(subject_id),
                details={**body, "receipt_hash": receipt_hash},
            )
        metrics.count_erasure(via=via)
        metrics.count_purged_memories(via="erasure", memories=body["memories_deleted"])
        # On a worker; with the broker down, here, after the commit (VACUUM cannot run in
        # a transaction): an erased key's wrapped copy must not wait for autovacuum.
        after_commit(
            vacuum_data_keys,
            inline=vacuum_data_keys,
            what="the data-key vacuum",
            refused=vacuum_data_keys,
        )
    return ErasureReceipt(**body, receipt_hash=receipt_hash, audit_event_id=event.pk)
