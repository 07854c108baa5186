"""Writes for memories: created (one, or many in a batch), updated with a new version,
archived, deleted, re-embedded.

Every function is keyword-only, runs in one transaction and writes exactly one audit event
in it (`memories_insert` alone leaves the event to its caller): either everything (row,
version, audit) is stored or nothing is. Content is validated, screened by the namespace's
PII policy, encrypted and indexed here, never in views or serializers.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit import listeners
from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories.embeddings import get_provider
from apps.memories.models import (
    Kind,
    Memory,
    MemoryVersion,
    Status,
    Subject,
)
from apps.memories.row_encryption import (
    KeyCache,
    open_memory,
    seal_memory,
    seal_version,
)
from apps.memories.search_fields import (
    embed_memories,
    embed_multilingual,
    index_memory,
    refresh_neighbour_context,
    set_embedding,
)
from apps.namespaces import pii
from apps.namespaces.models import Namespace
from apps.tokens.tokenizers import prompt_line_tokens
from memoryhub import erasure_ledger, metrics
from memoryhub.exceptions import ApplicationError

if TYPE_CHECKING:
    pass

from apps.memories.services.subjects import subject_get_or_create
from apps.memories.services.validity import turns_end_with

# What validate_content says of each field it checks: empty, NUL bytes, too large.
CONTENT_REFUSALS = {
    "content": (
        gettext_noop("Content must not be empty."),
        gettext_noop("Content must not contain NUL bytes."),
        gettext_noop("Content is %(size)s bytes; the limit is %(limit)s."),
    ),
    "text": (
        gettext_noop("Text must not be empty."),
        gettext_noop("Text must not contain NUL bytes."),
        gettext_noop("Text is %(size)s bytes; the limit is %(limit)s."),
    ),
}


def validate_content(
    *, content: str, field: Literal["content", "text"] = "content", limit: int | None = None
) -> None:
    """Refuse text that is empty, has NUL bytes, or exceeds its size limit (by default the
    configured content limit), naming `field` in the error."""
    empty, nul, too_large = CONTENT_REFUSALS[field]
    if not isinstance(content, str) or not content.strip():
        raise ApplicationError(empty, details={field: ["required"]})
    if "\x00" in content:
        raise ApplicationError(nul, details={field: ["nul"]})
    size = len(content.encode("utf-8", errors="strict"))
    limit = settings.MEMORYHUB_MAX_CONTENT_BYTES if limit is None else limit
    if size > limit:
        raise ApplicationError(
            too_large,
            params={"size": size, "limit": limit},
            code="content_too_large",
            status_code=413,
            details={field: {"bytes": size, "limit": limit}},
        )


@dataclass(frozen=True)
class NewMemory:
    """One memory to store (by `memory_create`, or many by `memories_create_bulk`).

    `subject_external_id=None` makes a shared memory under the namespace's key; the subject
    is created on first use. A memory with a `session_key` is a turn of that conversation at
    `position` (default: after the last one). Derive one from another with
    `dataclasses.replace`."""

    content: str
    subject_external_id: str | None = None
    kind: str = Kind.SEMANTIC
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    importance: float = 0.5
    confidence: float = 1.0
    source: dict[str, Any] = field(default_factory=dict)
    occurred_at: datetime | None = None
    valid_from: datetime | None = None  # from when it holds; now by default
    expires_at: datetime | None = None
    status: str = Status.ACTIVE
    session_key: str = ""  # memory_create: `source["session"]` when empty
    position: int | None = None
    embedding: Any = None  # a vector computed already (consolidation needs it first)
    multilingual_embedding: Any = None  # the same, of the multilingual model
    id: uuid.UUID | None = None  # chosen by the caller when it must refer to it before insert


def memory_create(
    *,
    actor: Actor,
    namespace: Namespace,
    item: NewMemory,
    keys: KeyCache | None = None,
) -> Memory:
    """Store a memory (encrypted, keyword-indexed, embedded) with its first version and one
    audit event.

    Without a `session_key`, the memory is a turn of `source["session"]` when its source
    names one; a turn's neighbours' context is refreshed in the same transaction.
    """
    if item.subject_external_id is not None:
        capture_check(namespace=namespace, subject_external_ids={item.subject_external_id})
    found = screen_for_subject(
        actor=actor,
        namespace=namespace,
        subject_external_id=item.subject_external_id,
        contents=[item.content],
    )
    item = replace(item, session_key=item.session_key or str(item.source.get("session") or ""))
    with transaction.atomic():
        (memory,) = memories_insert(actor=actor, namespace=namespace, items=[item], keys=keys)
        with listeners.private(about=memory):  # the webhooks' event reads it, not the table
            audit_record(
                actor=actor,
                action="memory.create",
                namespace=namespace,
                subject_id=memory.subject_id,
                object_type="memory",
                object_id=str(memory.id),
                details={
                    "kind": item.kind,
                    "bytes": len(item.content.encode()),
                    "tokens": memory.token_count,
                    **({"pii": found, "pii_policy": namespace.pii_policy} if found else {}),
                },
            )
    return memory


def memories_create_bulk(
    *,
    actor: Actor,
    namespace: Namespace,
    items: list[NewMemory],
    keys: KeyCache | None = None,
    embed: bool = True,
) -> list[Memory]:
    """Store many memories in one transaction with batched embedding and one audit event.

    All or nothing: one invalid item refuses the whole batch, naming its index. With
    `embed=False` they are stored without vectors (keyword recall finds them at once), for
    `memories_reembed` to embed later, on a worker.
    """
    if not items:
        return []
    capture_check(
        namespace=namespace,
        subject_external_ids={i.subject_external_id for i in items if i.subject_external_id},
    )
    with transaction.atomic():
        memories = memories_insert(
            actor=actor, namespace=namespace, items=items, keys=keys, embed=embed
        )
        audit_record(
            actor=actor,
            action="memory.create_bulk",
            namespace=namespace,
            object_type="memory",
            details={
                "count": len(memories),
                "subjects": len({m.subject_id for m in memories}),
                "tokens": sum(m.token_count for m in memories),
            },
        )
    return memories


def memories_insert(
    *,
    actor: Actor,
    namespace: Namespace,
    items: list[NewMemory],
    keys: KeyCache | None,
    embed: bool = True,
) -> list[Memory]:
    """Store memories (validated, screened, sealed, indexed, embedded, with their first
    versions) inside the caller's transaction, writing no audit event: for services that
    audit what they did as one event of their own (consolidation, lifecycle summaries).
    All or nothing: one invalid item refuses the batch, naming its index."""
    for index, item in enumerate(items):
        try:
            validate_content(content=item.content)
        except ApplicationError as error:
            if len(items) > 1:
                error.details = {"item": index, **error.details}
            raise
        if item.kind not in Kind.values:
            raise ApplicationError(
                gettext_noop("Unknown kind."),
                details={"kind": [f"{item.kind!r} is not one of {Kind.values}"]},
            )
    items = [_screened(namespace, item, index, len(items)) for index, item in enumerate(items)]
    keys = keys or KeyCache()
    now = timezone.now()
    subjects: dict[str, Subject] = {}
    for item in items:
        external_id = item.subject_external_id
        if external_id is not None and external_id not in subjects:
            subjects[external_id] = subject_get_or_create(
                actor=actor, namespace=namespace, external_id=external_id
            )
    owners = [
        subjects.get(item.subject_external_id) if item.subject_external_id else None
        for item in items
    ]
    positions = _positions(namespace, items, owners)
    memories: list[Memory] = []
    for item, subject, position in zip(items, owners, positions, strict=True):
        memory = _new_memory(item, namespace, subject, position, now)
        _seal_and_index(keys, memory, item.content)
        memories.append(memory)
    missing = [i for i, item in enumerate(items) if item.embedding is None] if embed else []
    embed_memories([memories[i] for i in missing], [items[i].content for i in missing])
    model = get_provider().name
    for memory, item in zip(memories, items, strict=True):
        if item.embedding is not None:
            set_embedding(memory, item.embedding, model)
    embed_multilingual(
        memories,
        [item.content for item in items],
        vectors=embed,
        given=[item.multilingual_embedding for item in items],
    )
    refresh_neighbour_context(memories, unsaved=True)
    Memory.objects.bulk_create(memories)
    versions = []
    for memory, item in zip(memories, items, strict=True):
        version = MemoryVersion(
            namespace_id=memory.namespace_id,
            memory=memory,
            version=1,
            changed_by=actor.display[:200],
            reason=gettext_noop("created"),
        )
        seal_version(keys, version, memory.subject_id, memory.namespace_id, item.content)
        versions.append(version)
    MemoryVersion.objects.bulk_create(versions)
    return memories


def _new_memory(
    item: NewMemory,
    namespace: Namespace,
    subject: Subject | None,
    position: int | None,
    now: datetime,
) -> Memory:
    """An unsaved memory of `item` at its first version, its content not sealed yet."""
    return Memory(
        id=item.id or uuid.uuid4(),
        namespace=namespace,
        subject=subject,
        kind=item.kind,
        importance=item.importance,
        confidence=item.confidence,
        tags=list(item.tags),
        metadata=dict(item.metadata),
        source=dict(item.source),
        occurred_at=item.occurred_at,
        created_at=now,
        updated_at=now,
        valid_from=item.valid_from or now,
        expires_at=item.expires_at,
        status=item.status,
        version=1,
        session_key=item.session_key,
        position=position,
    )


def _positions(
    namespace: Namespace, items: list[NewMemory], owners: list[Subject | None]
) -> list[int | None]:
    """Each item's position in its session: as given, else after the session's last stored
    one (and after the items before it in this batch); None outside a session."""
    next_position: dict[tuple[object, str], int] = {}
    positions: list[int | None] = []
    for item, subject in zip(items, owners, strict=True):
        position = item.position
        if item.session_key and position is None:
            slot = (subject.pk if subject else None, item.session_key)
            if slot not in next_position:
                last = (
                    Memory.objects.filter(
                        namespace=namespace, subject=subject, session_key=item.session_key
                    )
                    .order_by("-position")
                    .values_list("position", flat=True)
                    .first()
                )
                next_position[slot] = (last if last is not None else -1) + 1
            position = next_position[slot]
            next_position[slot] += 1
        positions.append(position)
    return positions


def screen_content(*, namespace: Namespace, content: str) -> pii.Screened:
    """The namespace's PII policy applied to content, before it is stored or embedded:
    as is, tagged, redacted, or refused (422 naming the types found, never the values)."""
    try:
        return pii.apply_policy(
            namespace.pii_policy, content, phone_region=settings.MEMORYHUB_PII_PHONE_REGION or "US"
        )
    except pii.PiiRejected as rejected:
        raise ApplicationError(
            gettext_noop("The namespace's PII policy rejects this content: %(types)s found."),
            params={"types": ", ".join(rejected.types)},
            code="pii_rejected",
            status_code=422,
            details={"content": {"pii": rejected.types}},
        ) from None


def screen_for_subject(
    *, actor: Actor, namespace: Namespace, subject_external_id: str | None, contents: list[str]
) -> list[str]:
    """Screen a write about a subject before it is stored: the PII types found (for the
    write's audit event). A refused write is audited here, with the subject and the types
    (never the values), since nothing else of it is kept; then the 422 goes on."""
    found: set[str] = set()
    for content in contents:
        try:
            found.update(screen_content(namespace=namespace, content=content).types)
        except ApplicationError as error:
            pii_rejection_record(
                actor=actor,
                namespace=namespace,
                subject_external_id=subject_external_id,
                types=error.details.get("content", {}).get("pii", []),
            )
            raise
    return sorted(found)


def pii_rejection_record(
    *, actor: Actor, namespace: Namespace, subject_external_id: str | None, types: list[str]
) -> None:
    """Audit a write the PII policy refused, with its subject (if known) and the types found,
    never the values: the subject sees it in the privacy portal. Outside any transaction
    that rolls back."""
    subject = (
        Subject.objects.filter(namespace=namespace, external_id=subject_external_id).first()
        if subject_external_id
        else None
    )
    if subject is None:
        return  # nobody to show it to: the API's 422 says it all
    audit_record(
        actor=actor,
        action="pii.rejected",
        namespace=namespace,
        subject_id=subject.pk,
        outcome="denied",
        details={"pii": sorted(types), "pii_policy": namespace.pii_policy},
    )


def capture_check(*, namespace: Namespace, subject_external_ids: set[str]) -> None:
    """Refuse a write of memories about a subject who paused memory (privacy portal, or the
    dashboard): 409 `subject_paused`."""
    if not subject_external_ids:
        return
    paused = Subject.objects.filter(
        namespace=namespace, external_id__in=subject_external_ids, paused=True
    ).exists()
    if paused:
        raise ApplicationError(
            gettext_noop("This subject has paused memory: nothing new is stored about them."),
            code="subject_paused",
            status_code=409,
            details={"subject": ["paused"]},
        )


def _screened(namespace: Namespace, item: NewMemory, index: int, count: int) -> NewMemory:
    try:
        screened = screen_content(namespace=namespace, content=item.content)
    except ApplicationError as error:
        if count > 1:
            error.details = {"item": index, **error.details}
        raise
    if screened.text == item.content and not screened.tags:
        return item
    return replace(item, content=screened.text, tags=sorted(set(item.tags) | set(screened.tags)))


UPDATABLE = frozenset(
    [
        "kind",
        "tags",
        "metadata",
        "importance",
        "confidence",
        "status",
        "expires_at",
        "occurred_at",
        "valid_to",
    ]
)


def _check_changes(changes: dict[str, Any]) -> None:
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ApplicationError(
            gettext_noop("Unknown memory fields."),
            details={field: ["unknown field"] for field in unknown},
        )
    if "kind" in changes and changes["kind"] not in Kind.values:
        raise ApplicationError(gettext_noop("Unknown kind."), details={"kind": ["unknown kind"]})
    if "status" in changes and changes["status"] not in Status.values:
        raise ApplicationError(
            gettext_noop("Unknown status."), details={"status": ["unknown status"]}
        )


def memory_update(
    *,
    actor: Actor,
    memory: Memory,
    content: str | None = None,
    reason: str = "",
    keys: KeyCache | None = None,
    **changes: Any,
) -> Memory:
    """Change a memory. New content makes a new version (the old one stays in history).

    Accepted `changes`: kind, tags, metadata, importance, confidence, status, expires_at,
    occurred_at, valid_to.
    """
    _check_changes(changes)
    if content is not None:
        validate_content(content=content)
        screened = screen_content(namespace=memory.namespace, content=content)
        content = screened.text
        if screened.tags:
            changes["tags"] = sorted(set(changes.get("tags", memory.tags)) | set(screened.tags))
    keys = keys or KeyCache()
    settled = False
    with transaction.atomic():
        memory = Memory.objects.select_for_update().select_related("namespace").get(pk=memory.pk)
        changed = sorted(name for name, value in changes.items() if getattr(memory, name) != value)
        for name in changed:
            setattr(memory, name, changes[name])
        if content is not None and content != open_memory(keys, memory):
            if memory.status == Status.DISPUTED and "status" not in changes:
                # A person's correction settles the doubt: the corrected fact is current.
                memory.status = Status.ACTIVE
                memory.metadata = {**memory.metadata, "reviewed_at": timezone.now().isoformat()}
                changed += ["status"]
                settled = True
            memory.version += 1
            _seal_and_index(keys, memory, content)
            _store_version(
                keys, memory, content, changed_by=actor.display, reason=reason[:200] or "updated"
            )
            embed_memories([memory], [content])
            embed_multilingual([memory], [content])
            changed.append("content")
            # The turn that said the old text no longer says what holds.
            turns_end_with(actor=actor, fact=memory, when=timezone.now(), replaced_in_place=True)
        elif "occurred_at" in changed:
            index_memory(memory, open_memory(keys, memory), keys.index_key(memory.namespace_id))
        memory.updated_at = timezone.now()
        memory.save()
        if "content" in changed or "occurred_at" in changed:
            refresh_neighbour_context([memory])
        memory_audit(
            actor=actor,
            action="memory.update",
            memory=memory,
            details={
                "fields": changed,
                "version": memory.version,
                **({"review": "edited"} if settled else {}),  # a review decision too
            },
        )
    return memory


def memory_archive(*, actor: Actor, memory: Memory) -> Memory:
    with transaction.atomic():
        Memory.objects.filter(pk=memory.pk).update(
            status=Status.ARCHIVED, updated_at=timezone.now()
        )
        memory.status = Status.ARCHIVED
        memory_audit(actor=actor, action="memory.archive", memory=memory)
    return memory


def memory_delete(*, actor: Actor, memory: Memory) -> None:
    """Hard delete: the memory and all its versions. The turn it was said in ends (kept
    as history): it says what was deleted. Counted after the commit (`via="single"`)."""
    with transaction.atomic():
        erasure_ledger.append(
            namespace_id=memory.namespace_id, scope="memories", memory_ids=[memory.pk]
        )
        turns_end_with(actor=actor, fact=memory, when=timezone.now())
        versions = MemoryVersion.objects.filter(memory=memory).count()
        Memory.objects.filter(pk=memory.pk).delete()
        refresh_neighbour_context([memory])
        metrics.count_purged_memories(via="single", memories=1)
        memory_audit(
            actor=actor,
            action="memory.delete",
            memory=memory,
            details={"versions": versions, "kind": memory.kind},
        )


def memory_audit(
    *, actor: Actor, action: str, memory: Memory, details: dict[str, Any] | None = None
) -> None:
    """One audit event about one memory (in the caller's transaction); details content-free."""
    audit_record(
        actor=actor,
        action=action,
        namespace=memory.namespace,
        subject_id=memory.subject_id,
        object_type="memory",
        object_id=str(memory.id),
        details=details,
    )


def _seal_and_index(keys: KeyCache, memory: Memory, content: str) -> None:
    seal_memory(keys, memory, content)
    index_memory(memory, content, keys.index_key(memory.namespace_id))
    memory.prompt_tokens = prompt_line_tokens(content)


def _store_version(
    keys: KeyCache, memory: Memory, content: str, *, changed_by: str, reason: str
) -> None:
    version = MemoryVersion(
        namespace_id=memory.namespace_id,
        memory=memory,
        version=memory.version,
        changed_by=changed_by[:200],
        reason=reason,
    )
    seal_version(keys, version, memory.subject_id, memory.namespace_id, content)
    version.save(force_insert=True)
