"""The write pipeline: conversation turns in, policy-checked, consolidated memories out.

`messages_ingest` runs in the request: it validates, applies the namespace's PII policy
(before anything is stored or embedded), stores the turns encrypted in their session and
records a Job, all in one transaction; the job's work (extraction, consolidation, embedding)
runs after commit, on a Celery worker when a broker is configured, in-process otherwise.

`ingest_job_run` does that work in one transaction with the job's status change, so a worker
killed mid-task leaves nothing behind and the redelivered task does it exactly once; a job
that finished already is not done again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories import crypto
from apps.memories.models import Kind, Subject
from apps.memories.row_encryption import KeyCache, seal_row
from apps.memories.services import (
    NewMemory,
    memories_create_bulk,
    pii_rejection_record,
    screen_content,
    subject_get_or_create,
    validate_content,
)
from apps.namespaces import pii
from apps.namespaces.models import Namespace
from apps.pipeline import chunking, jobs
from apps.pipeline.jobs import DOCUMENT, INGEST
from apps.pipeline.models import (
    Job,
    JobStatus,
    Message,
    Session,
)
from apps.pipeline.tasks import enqueue_document_job, enqueue_ingest_job
from memoryhub import metrics
from memoryhub.exceptions import ApplicationError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IncomingMessage:
    role: str
    content: str
    name: str = ""
    created_at: datetime | None = None


def request_fingerprint(keys: KeyCache, namespace: Namespace, payload: Any) -> str:
    """A keyed hash of a request body (HMAC under a key of the namespace), to tell a retry
    (same body) from a reused key; without the key it confirms no guess of the content."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    shared, _ = keys.key_for(namespace.pk, None)
    key = crypto.derive_key(shared, "request-fingerprint")
    return hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def _screen(namespace: Namespace, contents: list[str]) -> list[pii.Screened]:
    screened = []
    for index, content in enumerate(contents):
        try:
            screened.append(screen_content(namespace=namespace, content=content))
        except ApplicationError as error:
            error.details = {"messages": {"index": index, **error.details.get("content", {})}}
            raise
    return screened


def check_message_count(count: int) -> None:
    limit = settings.MEMORYHUB_MAX_MESSAGES_PER_REQUEST
    if count > limit:
        raise ApplicationError(
            gettext_noop("%(count)s messages in one request; the limit is %(limit)s."),
            params={"count": count, "limit": limit},
            code="too_many_messages",
            status_code=413,
            details={"messages": {"count": count, "limit": limit}},
        )


def messages_ingest(
    *,
    actor: Actor,
    namespace: Namespace,
    subject_external_id: str,
    session_external_id: str,
    messages: list[IncomingMessage],
    extract: bool = True,
    idempotency_key: str = "",
    request_body: Any = None,
    take_work: Callable[[int], None] | None = None,
) -> tuple[Job, bool]:
    """Store a batch of turns and queue their extraction. `take_work(turns)` is called once
    the request is known not to be a retry, before anything is stored, and may refuse (the
    caller's work quota). Returns (job, replayed): a retry
    with the same Idempotency-Key and body returns the first request's job and stores
    nothing; the same key with another body is refused (409)."""
    _check_messages(messages)
    keys = KeyCache()
    request_hash = request_fingerprint(keys, namespace, request_body) if idempotency_key else ""
    if idempotency_key:
        replay = _replayed(namespace, actor, idempotency_key, request_hash)
        if replay is not None:
            _requeue_if_stuck(replay)
            return replay, True
    if take_work is not None:
        take_work(len(messages))
    messages, screened = _screened_messages(actor, namespace, subject_external_id, messages)
    batch = _Batch(
        actor, namespace, subject_external_id, session_external_id, messages, screened, keys,
        extract, idempotency_key, request_hash,
    )  # fmt: skip
    try:
        job, will_extract = _store_batch(batch)
    except IntegrityError:
        if not idempotency_key:
            raise
        # The same Idempotency-Key arrived concurrently: the other request's job stands.
        replay = _replayed(namespace, actor, idempotency_key, request_hash)
        if replay is None:
            raise
        return replay, True
    accepted = len(messages)
    transaction.on_commit(lambda: metrics.ingested_messages.inc(accepted))
    if will_extract:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            jobs.run_ingest_job_inline(str(job.id))  # no broker: now, in this process
        else:
            enqueue_ingest_job(str(job.id))
    job.refresh_from_db()
    return job, False


def _check_messages(messages: list[IncomingMessage]) -> None:
    check_message_count(len(messages))
    if not messages:
        raise ApplicationError(gettext_noop("No messages."), details={"messages": ["required"]})
    for index, message in enumerate(messages):
        try:
            validate_content(content=message.content)
        except ApplicationError as error:
            error.details = {"messages": {"index": index, **error.details}}
            raise


def _screened_messages(
    actor: Actor, namespace: Namespace, subject_external_id: str, messages: list[IncomingMessage]
) -> tuple[list[IncomingMessage], list[Any]]:
    """The messages under the namespace's PII policy: their contents screened (a refusal is
    recorded, content-free), their names redacted or refused likewise."""
    try:
        screened = _screen(namespace, [m.content for m in messages])
    except ApplicationError as error:
        if error.code == "pii_rejected":
            pii_rejection_record(
                actor=actor,
                namespace=namespace,
                subject_external_id=subject_external_id,
                types=error.details.get("messages", {}).get("pii", []),
            )
        raise
    # A name is text from the app as well: the same policy applies (redacted, or refused).
    names = [
        screen_content(namespace=namespace, content=m.name).text[:64] if m.name.strip() else ""
        for m in messages
    ]
    return [replace(m, name=name) for m, name in zip(messages, names, strict=True)], screened


@dataclass(frozen=True)
class _Batch:
    actor: Actor
    namespace: Namespace
    subject_external_id: str
    session_external_id: str
    messages: list[IncomingMessage]
    screened: list[Any]
    keys: KeyCache
    extract: bool
    idempotency_key: str
    request_hash: str


def _store_batch(batch: _Batch) -> tuple[Job, bool]:
    """The batch's job and turns (none for a paused subject, unless the namespace keeps
    them), audited, in one transaction; and whether extraction is to run."""
    namespace, actor, screened = batch.namespace, batch.actor, batch.screened
    with transaction.atomic():
        subject = subject_get_or_create(
            actor=actor, namespace=namespace, external_id=batch.subject_external_id
        )
        paused = subject.paused
        job = Job.objects.create(
            namespace=namespace,
            subject=subject,
            kind=INGEST,
            idempotency_key=batch.idempotency_key,
            actor_id=actor.id[:64],
            request_hash=batch.request_hash,
        )
        stored: list[Message] = []
        session = None
        if not paused or namespace.keep_turns_when_paused:
            session = _session_for_update(namespace, subject, batch.session_external_id)
            stored = _store_messages(
                batch.keys, namespace, subject, session, batch.messages, screened
            )
        will_extract = batch.extract and not paused and bool(stored)
        job.payload = {
            "session": str(session.id) if session else None,
            "messages": [str(m.id) for m in stored],
            "extract": will_extract,
            "tags": {str(m.id): s.tags for m, s in zip(stored, screened, strict=False)},
        }
        if not will_extract:
            job.status = JobStatus.SUCCEEDED
            job.result = {
                "messages": len(stored),
                "memories": [],
                "decisions": {},
                "skipped": "paused" if paused else "extract=false" if stored else "",
            }
        job.save()
        audit_record(
            actor=actor,
            action="messages.ingest",
            namespace=namespace,
            subject_id=subject.pk,
            object_type="job",
            object_id=str(job.id),
            details={
                "messages": len(stored),
                "received": len(batch.messages),
                "paused": paused,
                "pii": sorted({t for s in screened for t in s.types}),
                "pii_policy": namespace.pii_policy,
            },
        )
    return job, will_extract


def _requeue_if_stuck(job: Job) -> None:
    if job.status == JobStatus.QUEUED and not settings.CELERY_TASK_ALWAYS_EAGER:
        enqueue_ingest_job(str(job.id))


def _replayed(
    namespace: Namespace, actor: Actor, key: str, request_hash: str, kind: str = INGEST
) -> Job | None:
    job = Job.objects.filter(
        namespace=namespace, actor_id=actor.id[:64], idempotency_key=key
    ).first()
    if job is not None and job.kind != kind:
        raise ApplicationError(
            gettext_noop("This Idempotency-Key was used for a different request."),
            code="idempotency_conflict",
            status_code=409,
            details={"idempotency_key": ["reused for another endpoint"]},
        )
    if job is not None and job.request_hash != request_hash:
        raise ApplicationError(
            gettext_noop("This Idempotency-Key was used for a different request."),
            code="idempotency_conflict",
            status_code=409,
            details={"idempotency_key": ["reused with another body"]},
        )
    return job


def _session_for_update(namespace: Namespace, subject: Subject, external_id: str) -> Session:
    session, _ = Session.objects.get_or_create(
        namespace=namespace, subject=subject, external_id=external_id
    )
    # Locks the session: concurrent batches of one session take positions one after another.
    # NO KEY, so that rows referencing the session are not kept from committing (their key
    # checks come at commit, after the audit chain's head: see jobs.ingest_job_run).
    return Session.objects.select_for_update(no_key=True).get(pk=session.pk)


def _store_messages(
    keys: KeyCache,
    namespace: Namespace,
    subject: Subject,
    session: Session,
    messages: list[IncomingMessage],
    screened: list[pii.Screened],
) -> list[Message]:
    last = session.messages.order_by("-position").values_list("position", flat=True).first()
    start = 0 if last is None else last + 1
    now = timezone.now()
    rows = []
    for offset, (message, screen) in enumerate(zip(messages, screened, strict=True)):
        row = Message(
            namespace_id=session.namespace_id,
            session=session,
            position=start + offset,
            role=message.role,
            name=message.name[:64],
            created_at=message.created_at or now,
            token_count=len(re.findall(r"\w+", screen.text)),
        )
        seal_row(keys, row, namespace.pk, subject.pk, screen.text)
        rows.append(row)
    Message.objects.bulk_create(rows)
    Session.objects.filter(pk=session.pk).update(updated_at=now)
    return rows


# --- documents --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentOutcome:
    document_id: str
    memory_ids: list[str]
    tokens: list[int]
    replayed: bool = False
    job: Job | None = None  # embedding the chunks, for a document too large to embed inline


def document_ingest(
    *,
    actor: Actor,
    namespace: Namespace,
    text: str,
    subject_external_id: str | None = None,
    title: str = "",
    metadata: dict[str, Any] | None = None,
    tags: list[str] | None = None,
    chunk_tokens: int | None = None,
    overlap_tokens: int | None = None,
    idempotency_key: str = "",
    request_body: Any = None,
    take_work: Callable[[int], None] | None = None,
) -> DocumentOutcome:
    """Split a long text into chunks (paragraphs, then sentences; `chunk_tokens` tokens of
    the configured encoding, `overlap_tokens` carried over) and store each as a semantic
    memory with the document's id, its position and metadata: shared when there is no
    subject, personal otherwise. All chunks or none.

    At most MEMORYHUB_MAX_DOCUMENT_CHUNKS chunks (413 beyond); `take_work(chunks)` is called
    before anything is stored, and may refuse (the caller's work quota). Beyond
    MEMORYHUB_DOCUMENT_INLINE_CHUNKS the chunks are stored without embeddings and a job
    embeds them: on a worker, or in this process after commit without a broker."""
    size = chunk_tokens or settings.MEMORYHUB_CHUNK_TOKENS
    encoding = settings.MEMORYHUB_CHUNK_ENCODING
    chunks = _chunks(text, size, overlap_tokens, encoding)
    size_bytes = len(text.encode())
    document_id = uuid.uuid4()
    items = _chunk_memories(chunks, document_id, subject_external_id, title, metadata, tags)
    keys = KeyCache()
    request_hash = request_fingerprint(keys, namespace, request_body) if idempotency_key else ""
    if idempotency_key:
        replay = _replayed(namespace, actor, idempotency_key, request_hash, kind=DOCUMENT)
        if replay is not None:
            return _replayed_document(replay)
    if take_work is not None:
        take_work(len(chunks))
    deferred = len(chunks) > settings.MEMORYHUB_DOCUMENT_INLINE_CHUNKS
    try:
        with transaction.atomic():
            outcome = _store_document(
                actor, namespace, items, document_id, size, size_bytes, chunks, keys, deferred
            )
            job = None
            if idempotency_key or deferred:
                job = _document_job(
                    actor, namespace, outcome, idempotency_key, request_hash, deferred
                )
    except IntegrityError:
        if not idempotency_key:
            raise
        replay = _replayed(namespace, actor, idempotency_key, request_hash, kind=DOCUMENT)
        if replay is None:
            raise
        return _replayed_document(replay)
    if job is not None and deferred:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            jobs.document_job_run(job_id=str(job.id))  # no broker: now, in this process
        else:
            enqueue_document_job(str(job.id))
        job.refresh_from_db()
    return DocumentOutcome(
        outcome.document_id, outcome.memory_ids, outcome.tokens, job=job if deferred else None
    )


def _chunk_memories(
    chunks: list[chunking.Chunk],
    document_id: uuid.UUID,
    subject_external_id: str | None,
    title: str,
    metadata: dict[str, Any] | None,
    tags: list[str] | None,
) -> list[NewMemory]:
    """Each chunk as a semantic memory, with the document's id, its place and metadata."""
    encoding = settings.MEMORYHUB_CHUNK_ENCODING
    base = dict(metadata or {})
    return [
        NewMemory(
            content=chunk.text,
            subject_external_id=subject_external_id,
            kind=Kind.SEMANTIC,
            tags=list(tags or []),
            metadata={**base, "document": str(document_id), "chunk": chunk.index}
            | ({"title": title} if title else {}),
            source={
                "document": str(document_id),
                "chunk": chunk.index,
                "chunks": len(chunks),
                "chars": [chunk.start, chunk.end],
                "tokens": chunk.tokens,
                "encoding": encoding,
            },
        )
        for chunk in chunks
    ]


def _chunks(
    text: str, size: int, overlap_tokens: int | None, encoding: str
) -> list[chunking.Chunk]:
    """The document's chunks of `size` tokens, checked: the overlap, the text's size and the
    number of chunks within their limits."""
    from apps.tokens.tokenizers import count_tokens

    overlap = settings.MEMORYHUB_CHUNK_OVERLAP_TOKENS if overlap_tokens is None else overlap_tokens
    if not 0 <= overlap <= size // 2:
        raise ApplicationError(
            gettext_noop("overlap_tokens must be between 0 and half of chunk_tokens (%(most)s)."),
            params={"most": size // 2},
            details={"overlap_tokens": ["out of range"]},
        )
    validate_content(content=text, field="text", limit=settings.MEMORYHUB_MAX_DOCUMENT_BYTES)

    def count(piece: str) -> int:
        return count_tokens(piece, encoding)

    chunks = chunking.chunk_text(text, size=size, overlap=overlap, count=count)
    limit = settings.MEMORYHUB_MAX_DOCUMENT_CHUNKS
    if len(chunks) > limit:
        raise ApplicationError(
            gettext_noop(
                "This document makes %(chunks)s chunks of %(size)s tokens; the limit is "
                "%(limit)s. Send larger chunks (chunk_tokens) or a shorter document."
            ),
            params={"chunks": len(chunks), "size": size, "limit": limit},
            code="too_many_chunks",
            status_code=413,
            details={"text": {"chunks": len(chunks), "limit": limit, "chunk_tokens": size}},
        )
    return chunks


def _document_job(
    actor: Actor,
    namespace: Namespace,
    outcome: Any,
    idempotency_key: str,
    request_hash: str,
    deferred: bool,
) -> Job:
    """The document's job: the record a retry is answered from, and (deferred) the work of
    embedding its chunks."""
    return Job.objects.create(
        namespace=namespace,
        subject=outcome.subject,
        kind=DOCUMENT,
        status=JobStatus.QUEUED if deferred else JobStatus.SUCCEEDED,
        idempotency_key=idempotency_key,
        actor_id=actor.id[:64],
        request_hash=request_hash,
        payload={"memories": outcome.memory_ids} if deferred else {},
        result={
            "document": outcome.document_id,
            "memories": outcome.memory_ids,
            "tokens": outcome.tokens,
        },
    )


def _replayed_document(job: Job) -> DocumentOutcome:
    result = job.result
    deferred = bool(job.payload.get("memories"))
    if deferred and job.status == JobStatus.QUEUED and not settings.CELERY_TASK_ALWAYS_EAGER:
        enqueue_document_job(str(job.id))  # a retry of a request whose enqueue was lost
    return DocumentOutcome(
        result["document"], result["memories"], result["tokens"], True, job if deferred else None
    )


def _store_document(
    actor: Actor,
    namespace: Namespace,
    items: list[NewMemory],
    document_id: uuid.UUID,
    size: int,
    size_bytes: int,
    chunks: list[chunking.Chunk],
    keys: KeyCache,
    deferred: bool,
) -> _StoredDocument:
    # Inside the caller's transaction: the memories, the audit event and the job together.
    memories = memories_create_bulk(
        actor=actor, namespace=namespace, items=items, keys=keys, embed=not deferred
    )
    audit_record(
        actor=actor,
        action="document.ingest",
        namespace=namespace,
        subject_id=memories[0].subject_id if memories else None,
        object_type="document",
        object_id=str(document_id),
        details={
            "chunks": len(chunks),
            "bytes": size_bytes,
            "chunk_tokens": size,
            "embedding": "job" if deferred else "inline",
        },
    )
    return _StoredDocument(
        str(document_id),
        [str(m.id) for m in memories],
        [c.tokens for c in chunks],
        memories[0].subject if memories else None,
    )


@dataclass(frozen=True)
class _StoredDocument:
    document_id: str
    memory_ids: list[str]
    tokens: list[int]
    subject: Subject | None
