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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories import chunking, crypto, extraction, pii
from apps.memories.embeddings import get_provider
from apps.memories.encryption import KeyCache, open_row, seal_row
from apps.memories.fields import vector_literal
from apps.memories.keyword_index import index_terms
from apps.memories.models import (
    ConsolidationLog,
    Decision,
    Job,
    JobStatus,
    Kind,
    Memory,
    Message,
    Session,
    SessionSummary,
    Subject,
)
from apps.memories.services import (
    NewMemory,
    _create_memories,
    memories_create_bulk,
    memory_update,
    screen_content,
    subject_get_or_create,
    validate_content,
)
from apps.namespaces.models import Namespace
from memoryhub.exceptions import ApplicationError

logger = logging.getLogger(__name__)

INGEST = "ingest"
DOCUMENT = "document"
DUPLICATE_COSINE = 0.92  # with DUPLICATE_OVERLAP of the tokens: the same fact, said again
DUPLICATE_OVERLAP = 0.6
SAME_COSINE = 0.985  # this close is the same statement whatever the tokens


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
            screened.append(screen_content(namespace, content))
        except ApplicationError as error:
            error.details = {"messages": {"index": index, **error.details.get("content", {})}}
            raise
    return screened


def check_message_count(count: int) -> None:
    limit = settings.MEMORYHUB_MAX_MESSAGES_PER_REQUEST
    if count > limit:
        raise ApplicationError(
            f"{count} messages in one request; the limit is {limit}.",
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
) -> tuple[Job, bool]:
    """Store a batch of turns and queue their extraction. Returns (job, replayed): a retry
    with the same Idempotency-Key and body returns the first request's job and stores
    nothing; the same key with another body is refused (409)."""
    check_message_count(len(messages))
    if not messages:
        raise ApplicationError("No messages.", details={"messages": ["required"]})
    for index, message in enumerate(messages):
        try:
            validate_content(message.content)
        except ApplicationError as error:
            error.details = {"messages": {"index": index, **error.details}}
            raise
    keys = KeyCache()
    request_hash = request_fingerprint(keys, namespace, request_body) if idempotency_key else ""
    if idempotency_key:
        replay = _replayed(namespace, actor, idempotency_key, request_hash)
        if replay is not None:
            _requeue_if_stuck(replay)
            return replay, True
    screened = _screen(namespace, [m.content for m in messages])
    # A name is text from the app as well: the same policy applies (redacted, or refused).
    names = [
        screen_content(namespace, m.name).text[:64] if m.name.strip() else "" for m in messages
    ]
    messages = [replace(m, name=name) for m, name in zip(messages, names, strict=True)]

    try:
        with transaction.atomic():
            subject = subject_get_or_create(
                actor=actor, namespace=namespace, external_id=subject_external_id
            )
            paused = subject.paused
            keep = not paused or namespace.keep_turns_when_paused
            job = Job.objects.create(
                namespace=namespace,
                subject=subject,
                kind=INGEST,
                idempotency_key=idempotency_key,
                actor_id=actor.id[:64],
                request_hash=request_hash,
            )
            stored: list[Message] = []
            session = None
            if keep:
                session = _session_for_update(namespace, subject, session_external_id)
                stored = _store_messages(keys, namespace, subject, session, messages, screened)
            will_extract = extract and not paused and bool(stored)
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
                    "received": len(messages),
                    "paused": paused,
                    "pii": sorted({t for s in screened for t in s.types}),
                },
            )
    except IntegrityError:
        if not idempotency_key:
            raise
        # The same Idempotency-Key arrived concurrently: the other request's job stands.
        replay = _replayed(namespace, actor, idempotency_key, request_hash)
        if replay is None:
            raise
        return replay, True
    if will_extract:
        from apps.memories.tasks import run_ingest_job_inline

        if settings.CELERY_TASK_ALWAYS_EAGER:
            run_ingest_job_inline(str(job.id))  # no broker: now, in this process
        else:
            enqueue_job(job)
    job.refresh_from_db()
    return job, False


def enqueue_job(job: Job) -> None:
    """Queue a job's task after any enclosing transaction commits. If the broker cannot take
    it, the job stays queued (its turns are stored) and the periodic requeue or a retried
    request sends it again: the task is idempotent."""
    from kombu.exceptions import OperationalError as BrokerError

    from apps.memories.tasks import run_ingest_job

    try:
        run_ingest_job.delay_on_commit(str(job.id))
    except BrokerError:
        logger.warning("Could not queue job %s; it stays queued for the requeue.", job.id)


def _requeue_if_stuck(job: Job) -> None:
    if job.status == JobStatus.QUEUED and not settings.CELERY_TASK_ALWAYS_EAGER:
        enqueue_job(job)


def requeue_stale_jobs(*, older_than_seconds: int = 600) -> int:
    """Queue again the ingest jobs still queued after a while (a lost enqueue)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    stale = list(Job.objects.filter(kind=INGEST, status=JobStatus.QUEUED, updated_at__lt=cutoff))
    for job in stale:
        enqueue_job(job)
        Job.objects.filter(pk=job.pk).update(updated_at=timezone.now())
    return len(stale)


def _replayed(
    namespace: Namespace, actor: Actor, key: str, request_hash: str, kind: str = INGEST
) -> Job | None:
    job = Job.objects.filter(
        namespace=namespace, actor_id=actor.id[:64], idempotency_key=key
    ).first()
    if job is not None and job.kind != kind:
        raise ApplicationError(
            "This Idempotency-Key was used for a different request.",
            code="idempotency_conflict",
            status_code=409,
            details={"idempotency_key": ["reused for another endpoint"]},
        )
    if job is not None and job.request_hash != request_hash:
        raise ApplicationError(
            "This Idempotency-Key was used for a different request.",
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
    return Session.objects.select_for_update().get(pk=session.pk)


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


def get_extractor() -> extraction.Extractor:
    if settings.MEMORYHUB_EXTRACTOR == "llm":
        from apps.memories.llm import LlmClient, LlmExtractor

        return LlmExtractor(LlmClient.from_settings())
    return extraction.OfflineExtractor()


def get_summarizer() -> Any:
    words = settings.MEMORYHUB_SUMMARY_WORDS
    if settings.MEMORYHUB_SUMMARIZER == "llm":
        from apps.memories.llm import LlmClient, LlmSummarizer

        return LlmSummarizer(LlmClient.from_settings(), words=words)
    return extraction.OfflineSummarizer(words=words)


def session_summary_update(
    *, keys: KeyCache, session: Session, summarizer: Any
) -> SessionSummary | None:
    """The session's next summary version: the previous summary rolled forward over the
    turns since it (only those are read and decrypted; encrypted under the subject's key)."""
    latest = session.summaries.order_by("-version").first()
    since = latest.through_position if latest is not None else -1
    new_turns = [
        extraction.Turn(
            role=m.role,
            content=open_row(keys, m, session.namespace_id, session.subject_id),
            position=m.position,
            name=m.name,
        )
        for m in session.messages.filter(position__gt=since).order_by("position")
    ]
    if not new_turns:
        return latest
    previous = open_row(keys, latest, session.namespace_id, session.subject_id) if latest else ""
    text = summarizer.summarize(new_turns, previous)
    if not text or (latest is not None and text == previous):
        return latest
    summary = SessionSummary(
        session=session,
        version=(latest.version + 1) if latest else 1,
        through_position=max(t.position for t in new_turns),
        summarizer=summarizer.name,
    )
    seal_row(keys, summary, session.namespace_id, session.subject_id, text)
    summary.save()
    return summary


def ingest_job_run(*, job_id: str, extractor: extraction.Extractor | None = None) -> Job:
    """Extract, consolidate and store the memories of one ingest job, and roll the session's
    summary forward, exactly once."""
    extractor = extractor or get_extractor()
    summarizer = get_summarizer()
    with transaction.atomic():
        job = (
            Job.objects.select_for_update(of=("self",))
            .select_related("namespace", "subject")
            .get(pk=job_id)
        )
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            return job  # done before (a redelivery, or a retry of a finished job)
        namespace = job.namespace
        # One job of a subject at a time: its facts, supersessions and summaries follow in
        # order, and a pause that came after the request still holds.
        subject = Subject.objects.select_for_update().get(pk=job.subject_id)
        if subject.paused:
            job.status = JobStatus.SUCCEEDED
            job.result = {"messages": len(job.payload.get("messages", [])), "memories": [],
                          "decisions": {}, "skipped": "paused"}  # fmt: skip
            job.updated_at = timezone.now()
            job.save()
            return job
        keys = KeyCache()
        ids = job.payload.get("messages", [])
        session = Session.objects.get(pk=job.payload["session"])
        rows = {str(m.id): m for m in Message.objects.filter(id__in=ids)}
        turns = [
            extraction.Turn(
                role=rows[i].role,
                content=open_row(keys, rows[i], namespace.pk, subject.pk),
                position=rows[i].position,
                name=rows[i].name,
                created_at=rows[i].created_at,
            )
            for i in ids
            if i in rows
        ]
        by_position = {rows[i].position: i for i in ids if i in rows}
        candidates = extractor.extract(turns)  # may raise: the task retries, then fails the job
        actor = Actor.system(f"job:{job.id}")
        outcome = consolidate_and_store(
            actor=actor,
            namespace=namespace,
            subject=subject,
            session=session,
            candidates=candidates,
            tags_by_message=job.payload.get("tags", {}),
            message_by_position=by_position,
            keys=keys,
            job=job,
        )
        summary = session_summary_update(keys=keys, session=session, summarizer=summarizer)
        job.status = JobStatus.SUCCEEDED
        job.attempts += 1
        job.result = {
            "messages": len(ids),
            "memories": outcome["memories"],
            "decisions": outcome["decisions"],
            "extractor": extractor.name,
            "summary_version": summary.version if summary else None,
        }
        job.error = ""
        job.updated_at = timezone.now()
        job.save()
        audit_record(
            actor=actor,
            action="job.ingest.succeeded",
            namespace=namespace,
            subject_id=subject.pk,
            object_type="job",
            object_id=str(job.id),
            details={"memories": len(outcome["memories"]), "decisions": outcome["decisions"]},
        )
    return job


def job_fail(*, job_id: str, reason: str, rejected: bool = False) -> None:
    """Mark a job failed with a content-free reason (its turns stay stored). `rejected`
    also records the refused extractor output in the consolidation log."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.status == JobStatus.SUCCEEDED:
            return
        job.status = JobStatus.FAILED
        job.error = reason[:500]
        if rejected:
            ConsolidationLog.objects.create(
                namespace_id=job.namespace_id,
                subject_id=job.subject_id,
                job=job,
                decision=Decision.REJECT,
                reason=reason[:200],
            )
        job.attempts += 1
        job.updated_at = timezone.now()
        job.save()
        audit_record(
            actor=Actor.system(f"job:{job.id}"),
            action="job.failed",
            namespace=job.namespace,
            subject_id=job.subject_id,
            object_type="job",
            object_id=str(job.id),
            outcome="failure",
            details={"kind": job.kind, "reason": reason[:200]},
        )


# --- consolidation ---------------------------------------------------------------------------


def slot_hash(keys: KeyCache, namespace_id: int, slot: str) -> str:
    """A keyed hash of a fact's slot ("favourite colour"): comparable, not readable."""
    key = keys.index_key(namespace_id)
    return hmac.new(key, f"slot:{slot}".encode(), hashlib.sha256).hexdigest()[:32]


def _token_overlap(a: list[int], b: list[int]) -> float:
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def consolidate_and_store(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    session: Session,
    candidates: list[extraction.Candidate],
    tags_by_message: dict[str, list[str]],
    message_by_position: dict[int, str],
    keys: KeyCache,
    job: Job | None = None,
) -> dict[str, Any]:
    """Store episodic candidates as turns of the session; decide add / no-op / merge /
    supersede for each semantic one against the subject's current facts. Every decision is
    logged with its reason."""
    decisions: dict[str, int] = {}
    memory_ids: list[str] = []
    logs: list[ConsolidationLog] = []
    index_key = keys.index_key(namespace.pk)

    def log(
        decision: str, reason: str, memory_id: Any, related: Any = None, sim: float | None = None
    ) -> None:
        decisions[decision] = decisions.get(decision, 0) + 1
        logs.append(
            ConsolidationLog(
                namespace=namespace,
                subject=subject,
                job=job,
                decision=decision,
                reason=reason,
                memory_id=memory_id,
                related_id=related,
                similarity=sim,
            )
        )

    def source(candidate: extraction.Candidate) -> dict[str, Any]:
        message = message_by_position.get(candidate.position)
        return {"session": session.external_id, "message": message, "extractor": candidate.category}

    episodic = [c for c in candidates if c.kind == Kind.EPISODIC]
    semantic = [c for c in candidates if c.kind != Kind.EPISODIC]
    items = [
        NewMemory(
            content=c.content,
            subject_external_id=subject.external_id,
            kind=Kind.EPISODIC,
            importance=c.importance,
            confidence=c.confidence,
            tags=sorted(
                set(c.tags) | set(tags_by_message.get(message_by_position.get(c.position, ""), []))
            ),
            source=source(c),
            session_key=session.external_id,
            position=c.position,
        )
        for c in episodic
    ]
    if items:
        for memory in _create_memories(actor=actor, namespace=namespace, items=items, keys=keys):
            memory_ids.append(str(memory.id))
            log(Decision.ADD, "conversation turn", memory.id)

    # Extracted facts are new text (an LLM may write out what the turn only hinted at): the
    # PII policy screens them before they are embedded or stored.
    screened: list[extraction.Candidate] = []
    for candidate in semantic:
        try:
            result = screen_content(namespace, candidate.content)
        except ApplicationError:
            log(Decision.REJECT, "the PII policy rejects the extracted fact", None)
            continue
        candidate.content = result.text
        candidate.tags = sorted(set(candidate.tags) | set(result.tags))
        screened.append(candidate)
    semantic = screened
    if semantic:
        vectors = get_provider().embed_documents([c.content for c in semantic])
        pending: list[_Pending] = []
        for candidate, vector in zip(semantic, vectors, strict=True):
            tags = sorted(
                set(candidate.tags)
                | set(tags_by_message.get(message_by_position.get(candidate.position, ""), []))
            )
            _consolidate_one(
                actor=actor,
                namespace=namespace,
                subject=subject,
                candidate=candidate,
                vector=vector,
                tags=tags,
                source=source(candidate),
                keys=keys,
                index_key=index_key,
                memory_ids=memory_ids,
                log=log,
                pending=pending,
            )
        _store_pending(actor, namespace, subject, pending, keys, memory_ids, log)
    ConsolidationLog.objects.bulk_create(logs)
    return {"memories": memory_ids, "decisions": decisions}


def _consolidate_one(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    candidate: extraction.Candidate,
    vector: np.ndarray,
    tags: list[str],
    source: dict[str, Any],
    keys: KeyCache,
    index_key: bytes,
    memory_ids: list[str],
    log: Any,
    pending: list[_Pending],
) -> None:
    """Decide for one new fact: no-op or merge now; add (possibly superseding) later, with
    the rest of the batch, in `pending`."""
    slot = slot_hash(keys, namespace.pk, candidate.slot) if candidate.slot else ""
    tokens = index_terms(candidate.content, index_key)
    current = Memory.objects.filter(
        namespace=namespace,
        subject=subject,
        kind=candidate.kind,
        status="active",
        valid_to__isnull=True,
    )
    # The nearest current facts of the same kind by meaning, similarity computed by the database.
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT id, 1 - (embedding <=> %(vector)s::vector), token_index, metadata ->> 'slot'
            FROM memories_memory
            WHERE namespace_id = %(namespace)s AND subject_id = %(subject)s AND kind = %(kind)s
              AND status = 'active' AND valid_to IS NULL AND embedding IS NOT NULL
            ORDER BY embedding <=> %(vector)s::vector LIMIT 5
            """,
            {
                "vector": vector_literal(vector),
                "namespace": namespace.pk,
                "subject": subject.pk,
                "kind": candidate.kind,
            },
        )
        # Iterative index scans (settings.HNSW_SEARCH_OPTIONS) return rows in relaxed order.
        near = sorted(cursor.fetchall(), key=lambda row: -row[1])
    for memory_id, similarity, token_index, near_slot in near:
        overlap = _token_overlap(tokens, token_index)
        if not (
            similarity >= SAME_COSINE
            or (similarity >= DUPLICATE_COSINE and overlap >= DUPLICATE_OVERLAP)
        ):
            continue
        if (slot or near_slot) and slot != (near_slot or ""):
            continue  # about different things ("home city" vs "work city"), however alike
        if set(tokens) <= set(token_index):
            log(Decision.NOOP, "near-duplicate of a current fact", memory_id, memory_id, similarity)
            return
        if slot:
            break  # a new value for the same slot ("12 Baker St" -> "14 Baker St"): supersede
        # The new statement says more: the existing memory takes it as a new version.
        memory = current.get(pk=memory_id)
        memory_update(
            actor=actor,
            memory=memory,
            content=candidate.content,
            reason="merged a more detailed restatement",
            keys=keys,
            confidence=max(memory.confidence, candidate.confidence),
            importance=max(memory.importance, candidate.importance),
        )
        memory_ids.append(str(memory_id))
        log(Decision.MERGE, "restated with more detail", memory_id, memory_id, similarity)
        return
    for other in pending:  # facts of this same batch, not stored yet
        if (slot or other.slot) and slot != other.slot:
            continue
        similarity = float(vector @ other.vector)
        overlap = _token_overlap(tokens, other.tokens)
        if (
            similarity >= SAME_COSINE
            or (similarity >= DUPLICATE_COSINE and overlap >= DUPLICATE_OVERLAP)
        ) and set(tokens) <= set(other.tokens):
            log(
                Decision.NOOP,
                "near-duplicate of a fact in the same batch",
                other.item.id,
                other.item.id,
                similarity,
            )
            return
    previous = (
        list(current.filter(metadata__slot=slot).values_list("id", flat=True)) if slot else []
    )
    previous += [other.item.id for other in pending if slot and other.slot == slot]
    pending.append(
        _Pending(
            item=NewMemory(
                id=uuid.uuid4(),
                content=candidate.content,
                subject_external_id=subject.external_id,
                kind=candidate.kind,
                importance=candidate.importance,
                confidence=candidate.confidence,
                tags=tags,
                metadata={"slot": slot, "supersedes": [str(i) for i in previous]}
                if previous
                else {"slot": slot}
                if slot
                else {},
                source=source,
                embedding=vector,
            ),
            vector=vector,
            tokens=tokens,
            slot=slot,
            supersedes=previous,
        )
    )


@dataclass
class _Pending:
    item: NewMemory
    vector: np.ndarray
    tokens: list[int]
    slot: str
    supersedes: list[Any]


def _store_pending(
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    pending: list[_Pending],
    keys: KeyCache,
    memory_ids: list[str],
    log: Any,
) -> None:
    """Insert the batch's new facts at once, then close the validity of those they replace
    (superseded, not deleted: they stay in history, linked to their successor)."""
    if not pending:
        return
    _create_memories(actor=actor, namespace=namespace, items=[p.item for p in pending], keys=keys)
    now = timezone.now()
    for new in pending:
        memory_ids.append(str(new.item.id))
        if not new.supersedes:
            log(Decision.ADD, "new fact", new.item.id)
            continue
        for old in Memory.objects.filter(pk__in=new.supersedes, valid_to__isnull=True):
            old.valid_to = now
            old.metadata = {**old.metadata, "superseded_by": str(new.item.id)}
            old.updated_at = now
            old.save(update_fields=["valid_to", "metadata", "updated_at"])
            audit_record(
                actor=actor,
                action="memory.supersede",
                namespace=namespace,
                subject_id=subject.pk,
                object_type="memory",
                object_id=str(old.id),
                details={"successor": str(new.item.id)},
            )
            log(Decision.SUPERSEDE, "a new value for the same fact", new.item.id, old.id)


# --- documents --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentOutcome:
    document_id: str
    memory_ids: list[str]
    tokens: list[int]
    replayed: bool = False


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
) -> DocumentOutcome:
    """Split a long text into chunks (paragraphs, then sentences; `chunk_tokens` tokens of
    the configured encoding, `overlap_tokens` carried over) and store each as a semantic
    memory with the document's id, its position and metadata: shared when there is no
    subject, personal otherwise. All chunks or none."""
    from apps.context.tokenizers import count_tokens

    size = chunk_tokens or settings.MEMORYHUB_CHUNK_TOKENS
    overlap = settings.MEMORYHUB_CHUNK_OVERLAP_TOKENS if overlap_tokens is None else overlap_tokens
    if not 0 <= overlap <= size // 2:
        raise ApplicationError(
            f"overlap_tokens must be between 0 and half of chunk_tokens ({size // 2}).",
            details={"overlap_tokens": ["out of range"]},
        )
    validate_content(text, field="text", limit=settings.MEMORYHUB_MAX_DOCUMENT_BYTES)
    size_bytes = len(text.encode())
    encoding = settings.MEMORYHUB_CHUNK_ENCODING

    def count(piece: str) -> int:
        return count_tokens(piece, encoding)

    chunks = chunking.chunk_text(text, size=size, overlap=overlap, count=count)
    document_id = uuid.uuid4()
    base = dict(metadata or {})
    items = [
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
    keys = KeyCache()
    request_hash = request_fingerprint(keys, namespace, request_body) if idempotency_key else ""
    if idempotency_key:
        replay = _replayed(namespace, actor, idempotency_key, request_hash, kind=DOCUMENT)
        if replay is not None:
            return DocumentOutcome(
                replay.result["document"], replay.result["memories"], replay.result["tokens"], True
            )
    try:
        with transaction.atomic():
            outcome = _store_document(
                actor, namespace, items, document_id, size, size_bytes, chunks, keys
            )
            if idempotency_key:
                Job.objects.create(
                    namespace=namespace,
                    subject_id=None,
                    kind=DOCUMENT,
                    status=JobStatus.SUCCEEDED,
                    idempotency_key=idempotency_key,
                    actor_id=actor.id[:64],
                    request_hash=request_hash,
                    result={
                        "document": outcome.document_id,
                        "memories": outcome.memory_ids,
                        "tokens": outcome.tokens,
                    },
                )
    except IntegrityError:
        if not idempotency_key:
            raise
        replay = _replayed(namespace, actor, idempotency_key, request_hash, kind=DOCUMENT)
        if replay is None:
            raise
        return DocumentOutcome(
            replay.result["document"], replay.result["memories"], replay.result["tokens"], True
        )
    return outcome


def _store_document(
    actor: Actor,
    namespace: Namespace,
    items: list[NewMemory],
    document_id: uuid.UUID,
    size: int,
    size_bytes: int,
    chunks: list[chunking.Chunk],
    keys: KeyCache,
) -> DocumentOutcome:
    # Inside the caller's transaction: the memories, the audit event and the job together.
    memories = memories_create_bulk(actor=actor, namespace=namespace, items=items, keys=keys)
    audit_record(
        actor=actor,
        action="document.ingest",
        namespace=namespace,
        subject_id=memories[0].subject_id if memories else None,
        object_type="document",
        object_id=str(document_id),
        details={"chunks": len(chunks), "bytes": size_bytes, "chunk_tokens": size},
    )
    return DocumentOutcome(
        str(document_id), [str(m.id) for m in memories], [c.tokens for c in chunks]
    )
