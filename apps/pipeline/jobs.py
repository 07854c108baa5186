"""Ingest jobs: the work after the request (extraction, consolidation, the session's
summary) done exactly once, its retry policy, and failing a job with a content-free reason.

`ingest_job_run` does the work in one transaction with the job's status change, so a worker
killed mid-task leaves nothing behind and the redelivered task does it exactly once; a job
that finished already is not done again. Celery tasks (`tasks.py`) and the in-process path
without a broker both go through `ingest_attempt`.
"""

from __future__ import annotations

import logging
import time
import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.models import Outcome
from apps.audit.services import audit_record
from apps.facts.rules import facts_remembered
from apps.memories.models import Subject
from apps.memories.row_encryption import KeyCache, open_row
from apps.memories.services import memories_reembed
from apps.pipeline import extraction
from apps.pipeline.consolidation import consolidate_and_store, replayed_turn_times
from apps.pipeline.extractors import Extracted, extract_with_fallback, get_extractor
from apps.pipeline.llm import LLM_ERRORS, LlmOutputError, LlmRefused, LlmUnavailable
from apps.pipeline.models import (
    ConsolidationLog,
    Decision,
    Job,
    JobStatus,
    Message,
    Session,
    SessionSummary,
)
from apps.pipeline.summaries import get_summarizer, session_summary_update
from memoryhub import metrics
from memoryhub.exceptions import ApplicationError

logger = logging.getLogger(__name__)

INGEST = "ingest"
DOCUMENT = "document"


def _count_finished(outcome: str) -> None:
    """Count an ingestion job's end once its transaction commits (a rollback counts none)."""
    transaction.on_commit(lambda: metrics.ingest_jobs.labels(outcome=outcome).inc())


def _turns(
    keys: KeyCache, rows: list[Message], namespace_id: int, subject_id: uuid.UUID
) -> list[extraction.Turn]:
    """The job's messages as the extractor reads them, opened."""
    return [
        extraction.Turn(
            role=row.role,
            content=open_row(keys, row, namespace_id, subject_id),
            position=row.position,
            name=row.name,
            created_at=row.created_at,
        )
        for row in rows
    ]


def _skipped_paused(job: Job) -> Job:
    """A job of a paused subject: done, nothing remembered."""
    job.status = JobStatus.SUCCEEDED
    job.result = {"messages": len(job.payload.get("messages", [])), "memories": [],
                  "decisions": {}, "skipped": "paused"}  # fmt: skip
    job.updated_at = timezone.now()
    job.save()
    _count_finished("succeeded")
    return job


def ingest_job_run(*, job_id: str, extractor: extraction.Extractor | None = None) -> Job:
    """Extract, consolidate and store the memories of one ingest job, and roll the session's
    summary forward, exactly once."""
    with transaction.atomic():
        job = (
            Job.objects.select_for_update(of=("self",))
            .select_related("namespace", "subject")
            .get(pk=job_id)
        )
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            return job  # done before (a redelivery, or a retry of a finished job)
        namespace = job.namespace
        extractor = extractor or get_extractor(namespace)
        # One job of a subject at a time: its facts, supersessions and summaries follow in
        # order, and a pause that came after the request still holds. NO KEY: a write that
        # holds the audit chain's head checks its foreign key to the subject at commit (KEY
        # SHARE); FOR UPDATE would make it wait for this job, which waits for the head.
        assert job.subject_id is not None  # ingest jobs always have a subject
        subject = Subject.objects.select_for_update(no_key=True).get(pk=job.subject_id)
        if subject.paused:
            return _skipped_paused(job)
        keys = KeyCache()
        ids = job.payload.get("messages", [])
        session = Session.objects.get(pk=job.payload["session"])
        rows = {str(m.id): m for m in Message.objects.filter(id__in=ids)}
        turns = _turns(keys, [rows[i] for i in ids if i in rows], namespace.pk, subject.pk)
        by_position = {rows[i].position: i for i in ids if i in rows}
        # The extraction and the summary read the same turns: their facts are found once.
        with facts_remembered():
            extracted = extract_with_fallback(extractor, turns)
            actor = Actor.for_job(job.id, gettext_noop("write pipeline"))
            if extracted.refused_whole:
                ConsolidationLog.objects.create(
                    namespace=namespace, subject=subject, job=job, decision=Decision.REJECT,
                    reason=extracted.fallback[:200],
                )  # fmt: skip
            outcome = consolidate_and_store(
                actor=actor,
                namespace=namespace,
                subject=subject,
                session=session,
                candidates=extracted.candidates,
                tags_by_message=job.payload.get("tags", {}),
                message_by_position=by_position,
                keys=keys,
                job=job,
                said_at={
                    **{rows[i].position: rows[i].created_at for i in ids if i in rows},
                    **replayed_turn_times(keys=keys, subject=subject, session=session, turns=turns),
                },
            )
            summary = _summary_update(keys=keys, session=session)
        _succeeded(job, actor, extracted, outcome, summary, messages=len(ids))
    return job


def _succeeded(
    job: Job,
    actor: Actor,
    extracted: Extracted,
    outcome: dict[str, Any],
    summary: SessionSummary | None,
    *,
    messages: int,
) -> None:
    """Record an ingest job's success, with what extracted it (and why the rules stood in,
    if they did), and audit it."""
    job.status = JobStatus.SUCCEEDED
    job.attempts += 1
    job.result = {
        "messages": messages,
        "memories": outcome["memories"],
        "decisions": outcome["decisions"],
        "extractor": extracted.extractor,
        "model": extracted.model,
        "fallback": extracted.fallback,
        "summary_version": summary.version if summary else None,
    }
    job.error = ""
    job.updated_at = timezone.now()
    job.save()
    _count_finished("succeeded")
    audit_record(
        actor=actor,
        action="job.ingest.succeeded",
        namespace=job.namespace,
        subject_id=job.subject_id,
        object_type="job",
        object_id=str(job.id),
        details={
            "memories": len(outcome["memories"]),
            "decisions": outcome["decisions"],
            "extractor": extracted.extractor,
            **({"fallback": True} if extracted.fallback else {}),
        },
    )


def _summary_update(*, keys: KeyCache, session: Session) -> SessionSummary | None:
    """The session's next summary: the LLM's, or the offline one when it cannot answer."""
    try:
        return session_summary_update(keys=keys, session=session, summarizer=get_summarizer())
    except LLM_ERRORS:
        offline = extraction.OfflineSummarizer(words=settings.MEMORYHUB_SUMMARY_WORDS)
        return session_summary_update(keys=keys, session=session, summarizer=offline)


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
        if job.kind in (INGEST, DOCUMENT):
            _count_finished("failed")
        audit_record(
            actor=Actor.for_job(job.id, gettext_noop("write pipeline")),
            action="job.failed",
            namespace=job.namespace,
            subject_id=job.subject_id,
            object_type="job",
            object_id=str(job.id),
            outcome=Outcome.FAILED,
            details={"kind": job.kind, "reason": reason[:200]},
        )


def ingest_attempt(job_id: str, retries: int) -> float | None:
    """One attempt at an ingest job; returns the delay before the next attempt, or None once
    the job is finished (succeeded, or failed with its reason).

    The server's extractors never fail a job for their LLM: the rules stand in
    (`extractors.extract_with_fallback`). An LLM error that still reaches here (from an
    extractor without that fallback) is retried MEMORYHUB_JOB_RETRIES times with exponential
    backoff; then the job fails, its turns staying stored. A refusal (4xx) or any other error
    fails the job at once; for an unexpected error only its type is kept (a database error's
    text can quote row values).
    """
    try:
        ingest_job_run(job_id=job_id)
    except (LlmUnavailable, LlmOutputError) as error:
        if retries < settings.MEMORYHUB_JOB_RETRIES:
            return float(settings.MEMORYHUB_JOB_RETRY_DELAY * 2**retries)
        invalid = isinstance(error, LlmOutputError)
        job_fail(
            job_id=job_id,
            reason=f"{'invalid LLM output' if invalid else 'LLM unavailable'} after "
            f"{retries + 1} attempts: {error}",
            rejected=invalid,
        )
    except LlmRefused as error:  # the same request would be refused again
        job_fail(job_id=job_id, reason=str(error))
    except Exception as error:  # a bug: not retried; its message may quote data, so not kept
        logger.error("Ingest job %s failed: %s", job_id, type(error).__name__)
        job_fail(job_id=job_id, reason=f"internal error ({type(error).__name__})")
    return None


def run_ingest_job_inline(job_id: str) -> None:
    """An ingest job without a broker: in this process, retries included (the request waits)."""
    retries = 0
    while (delay := ingest_attempt(job_id, retries)) is not None:
        time.sleep(delay)
        retries += 1


def stale_ingest_jobs_claim(
    *, older_than_seconds: int | None = None, kind: str = INGEST
) -> list[str]:
    """The jobs of `kind` still queued after a while (a lost enqueue), each claimed for the
    next `older_than_seconds` (default: MEMORYHUB_REQUEUE_AFTER_SECONDS) by a conditional
    update, so two requeues never send one job twice."""
    if older_than_seconds is None:
        older_than_seconds = settings.MEMORYHUB_REQUEUE_AFTER_SECONDS
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    stale = Job.objects.filter(kind=kind, status=JobStatus.QUEUED, updated_at__lt=cutoff)
    claimed = []
    for job_id in stale.values_list("id", flat=True):
        if Job.objects.filter(pk=job_id, updated_at__lt=cutoff).update(updated_at=timezone.now()):
            claimed.append(str(job_id))
    return claimed


def document_job_run(*, job_id: str) -> Job:
    """Embed the chunks of a document too large to embed in its request, exactly once: a
    finished job is left as it is; chunks embedded already are not embedded again. When the
    embedding provider fails the job fails, its chunks staying stored (keyword recall finds
    them; `reembed` embeds them later)."""
    job = Job.objects.select_related("namespace").get(pk=job_id)
    if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        return job
    actor = Actor.for_job(job.id, gettext_noop("write pipeline"))
    try:
        embedded = memories_reembed(actor=actor, memory_ids=job.payload.get("memories", []))
    except ApplicationError as error:
        job_fail(job_id=job_id, reason=error.message)
        job.refresh_from_db()
        return job
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            return job
        job.status = JobStatus.SUCCEEDED
        job.attempts += 1
        job.result = {**job.result, "embedded": embedded}
        job.updated_at = timezone.now()
        job.save()
        _count_finished("succeeded")
        audit_record(
            actor=actor,
            action="job.document.succeeded",
            namespace=job.namespace,
            subject_id=job.subject_id,
            object_type="job",
            object_id=str(job.id),
            details={"embedded": embedded},
        )
    return job
