"""Mem0's memories imported through MemoryHub's own write path: validated, screened by the
namespace's PII policy, encrypted under the subject's key, embedded with the namespace's
models (Mem0's vectors are never read), deduplicated, and audited as an import with counts.

Each Mem0 id is recorded (ImportedMemory) in the transaction that stores its memory, so an
import stopped part way, or run again, stores nothing twice. A record that cannot be stored
is reported with its id and skipped; the run goes on.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from itertools import islice

from django.db import transaction
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.mem0_bridge.models import ImportedMemory
from apps.mem0_bridge.records import BadRecord, Record
from apps.mem0_bridge.selectors import imported_source_ids
from apps.memories.models import Memory, MemoryVersion, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import (
    NewMemory,
    memories_insert,
    memory_update,
    screen_content,
)
from apps.namespaces.models import Namespace
from memoryhub.exceptions import ApplicationError

BATCH_SIZE = 64
HISTORY_REASON = "imported from Mem0's history"


@dataclass
class ImportReport:
    """What an import did (or, dry, would do): counts only, and the bad records' ids."""

    source: str
    dry_run: bool = False
    read: int = 0
    imported: int = 0
    already_imported: int = 0
    duplicates: int = 0
    versions: int = 0
    subjects: set[str] = field(default_factory=set)
    new_subjects: set[str] = field(default_factory=set)
    pii: Counter[str] = field(default_factory=Counter)
    bad: list[BadRecord] = field(default_factory=list)

    def counts(self) -> dict[str, object]:
        """Content-free: for the audit event and the command's summary."""
        return {
            "source": self.source,
            "read": self.read,
            "imported": self.imported,
            "already_imported": self.already_imported,
            "duplicates": self.duplicates,
            "versions": self.versions,
            "subjects": len(self.subjects),
            "new_subjects": len(self.new_subjects),
            "pii": dict(sorted(self.pii.items())),
            "bad": len(self.bad),
        }


def _normal(text: str) -> str:
    folded = " ".join(text.split()).casefold()
    return hashlib.sha256(folded.encode()).hexdigest()


class _Seen:
    """Which contents each subject has (its stored memories, opened once, and what this run
    stored): a record whose text one of them has already is a duplicate of it."""

    def __init__(self, namespace: Namespace, keys: KeyCache) -> None:
        self.namespace = namespace
        self.keys = keys
        self.known: dict[str | None, dict[str, str]] = {}

    def of(self, *, user_id: str | None) -> dict[str, str]:
        if user_id not in self.known:
            memories = Memory.objects.filter(namespace=self.namespace).defer(
                "embedding", "context_embedding", "multilingual_embedding"
            )
            memories = (
                memories.filter(subject__external_id=user_id)
                if user_id is not None
                else memories.filter(subject__isnull=True)
            )
            self.known[user_id] = {
                _normal(open_memory(self.keys, memory)): str(memory.pk)
                for memory in memories.select_related("namespace")
            }
        return self.known[user_id]


def mem0_records_import(
    *,
    actor: Actor,
    namespace: Namespace,
    records: Iterable[Record | BadRecord],
    source: str,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import Mem0 records into `namespace`, in batches of BATCH_SIZE, each batch in one
    transaction with its id mappings and one `memory.import` audit event (its counts); then
    one `mem0.import` event with the run's totals. Dry, nothing is written: the report says
    what would be (subjects, memories, PII found, duplicates, bad records)."""
    report = ImportReport(source=source, dry_run=dry_run)
    keys = KeyCache()
    seen = _Seen(namespace, keys)
    existing = set(
        Subject.objects.filter(namespace=namespace).values_list("external_id", flat=True)
    )
    paused = set(
        Subject.objects.filter(namespace=namespace, paused=True).values_list(
            "external_id", flat=True
        )
    )
    iterator = iter(records)
    while batch := list(islice(iterator, BATCH_SIZE)):
        fresh, duplicates = _fresh(namespace, report, batch, seen, paused)
        for record in fresh:
            report.subjects.add(record.user_id or "")
            if record.user_id is not None and record.user_id not in existing:
                report.new_subjects.add(record.user_id)
        if dry_run:
            report.imported += len(fresh)
        else:
            _store(actor, namespace, report, fresh, keys)
            _map_duplicates(namespace, duplicates)
        if progress is not None:
            progress(len(batch))
    if not dry_run:
        audit_record(
            actor=actor,
            action="mem0.import",
            namespace=namespace,
            object_type="namespace",
            object_id=namespace.slug,
            details=report.counts(),
        )
    return report


def _fresh(
    namespace: Namespace,
    report: ImportReport,
    batch: list[Record | BadRecord],
    seen: _Seen,
    paused: set[str],
) -> tuple[list[Record], list[tuple[Record, str]]]:
    """The batch's records to store (each given the id its memory will have), and its
    duplicates with the memory each duplicates: not imported before, screened by the PII
    policy (a refusal makes a bad record)."""
    report.read += len(batch)
    records = [r for r in batch if isinstance(r, Record)]
    report.bad += [r for r in batch if isinstance(r, BadRecord)]
    done = imported_source_ids(namespace=namespace, source_ids=[r.source_id for r in records])
    fresh: list[Record] = []
    duplicates: list[tuple[Record, str]] = []
    for record in records:
        if record.source_id in done:
            report.already_imported += 1
            continue
        done.add(record.source_id)
        problem = _refusal(namespace, report, record, paused)
        if problem is not None:
            report.bad.append(problem)
            continue
        contents = seen.of(user_id=record.user_id)
        fingerprint = _normal(record.text)
        if fingerprint in contents:
            report.duplicates += 1
            duplicates.append((record, contents[fingerprint]))
            continue
        record = replace(record, memory_id=uuid.uuid4())
        contents[fingerprint] = str(record.memory_id)
        fresh.append(record)
    return fresh, duplicates


def _refusal(
    namespace: Namespace, report: ImportReport, record: Record, paused: set[str]
) -> BadRecord | None:
    if record.user_id is not None and record.user_id in paused:
        return BadRecord(record.source_id, "the subject paused memory")
    try:
        for text in {record.text, *(entry.text for entry in record.history)}:
            report.pii.update(screen_content(namespace=namespace, content=text).types)
    except ApplicationError as error:
        return BadRecord(record.source_id, error.message)
    return None


def _map(namespace: Namespace, record: Record, memory_id: str, *, duplicate: bool) -> None:
    ImportedMemory.objects.create(
        namespace=namespace, source_id=record.source_id, memory_id=memory_id, duplicate=duplicate
    )


def _map_duplicates(namespace: Namespace, duplicates: list[tuple[Record, str]]) -> None:
    """A duplicate is recorded as imported once the memory it duplicates is stored (one
    that was refused leaves it to be imported by the next run)."""
    stored = {
        str(pk)
        for pk in Memory.objects.filter(
            namespace=namespace, pk__in=[target for _, target in duplicates]
        ).values_list("pk", flat=True)
    }
    for record, target in duplicates:
        if target in stored:
            _map(namespace, record, target, duplicate=True)


def _item(record: Record, text: str) -> NewMemory:
    return NewMemory(
        id=record.memory_id,
        content=text,
        subject_external_id=record.user_id,
        tags=record.tags,
        metadata=record.metadata,
        source={"app": "mem0", "mem0_id": record.source_id}
        | ({"session": record.session} if record.session else {}),
        session_key=record.session,
        valid_from=record.created_at,
        expires_at=record.expires_at,
    )


def _store(
    actor: Actor, namespace: Namespace, report: ImportReport, records: list[Record], keys: KeyCache
) -> None:
    """Store the records, the batch at once (its embeddings computed together); should one
    of them be refused, each on its own, so that the others are stored and it is reported."""
    plain = [r for r in records if len(r.history) <= 1]
    try:
        _store_batch(actor, namespace, report, plain, keys)
    except ApplicationError:
        for record in plain:
            try:
                _store_batch(actor, namespace, report, [record], keys)
            except ApplicationError as error:
                report.bad.append(BadRecord(record.source_id, error.message))
    for record in records:
        if len(record.history) > 1:
            try:
                _store_with_history(actor, namespace, report, record, keys)
            except ApplicationError as error:
                report.bad.append(BadRecord(record.source_id, error.message))


def _store_batch(
    actor: Actor, namespace: Namespace, report: ImportReport, records: list[Record], keys: KeyCache
) -> None:
    if not records:
        return
    with transaction.atomic():
        memories = memories_insert(
            actor=actor,
            namespace=namespace,
            items=[_item(record, record.text) for record in records],
            keys=keys,
        )
        _keep_times(memories, records)
        ImportedMemory.objects.bulk_create(
            ImportedMemory(namespace=namespace, source_id=record.source_id, memory_id=memory.pk)
            for record, memory in zip(records, memories, strict=True)
        )
        _audit_batch(actor, namespace, records, memories, versions=len(memories))
    report.imported += len(memories)
    report.versions += len(memories)


def _store_with_history(
    actor: Actor, namespace: Namespace, report: ImportReport, record: Record, keys: KeyCache
) -> None:
    """A memory Mem0 changed: stored with its first text, then changed through
    `memory_update` to each later one, so that every text is a version, at its own time."""
    texts = [entry.text for entry in record.history]
    times = [entry.at for entry in record.history]
    if texts[-1] != record.text:
        texts.append(record.text)
        times.append(record.updated_at)
    with transaction.atomic():
        (memory,) = memories_insert(
            actor=actor, namespace=namespace, items=[_item(record, texts[0])], keys=keys
        )
        for text in texts[1:]:
            memory = memory_update(
                actor=actor, memory=memory, content=text, reason=HISTORY_REASON, keys=keys
            )
        for number, at in enumerate(times, start=1):
            if at is not None:
                MemoryVersion.objects.filter(memory=memory, version=number).update(created_at=at)
        _keep_times([memory], [record])
        _map(namespace, record, str(memory.pk), duplicate=False)
        _audit_batch(actor, namespace, [record], [memory], versions=memory.version)
    report.imported += 1
    report.versions += memory.version


def _keep_times(memories: list[Memory], records: list[Record]) -> None:
    """Mem0's times kept: `created_at` is the memory's creation and the start of its
    validity (given to the insert), `updated_at` its last change."""
    now = timezone.now()
    for memory, record in zip(memories, records, strict=True):
        memory.created_at = record.created_at or now
        memory.updated_at = record.updated_at or memory.created_at
    Memory.objects.bulk_update(memories, ["created_at", "updated_at"])
    first = {m.pk: m.created_at for m in memories}
    versions = list(MemoryVersion.objects.filter(memory__in=memories, version=1))
    for version in versions:
        version.created_at = first[version.memory_id]
    MemoryVersion.objects.bulk_update(versions, ["created_at"])


def _audit_batch(
    actor: Actor,
    namespace: Namespace,
    records: list[Record],
    memories: list[Memory],
    *,
    versions: int,
) -> None:
    audit_record(
        actor=actor,
        action="memory.import",
        namespace=namespace,
        object_type="memory",
        object_id=str(memories[0].pk) if len(memories) == 1 else "",
        details={
            "source": "mem0",
            "count": len(memories),
            "versions": versions,
            "subjects": len({m.subject_id for m in memories}),
            "tokens": sum(m.token_count for m in memories),
        },
    )
