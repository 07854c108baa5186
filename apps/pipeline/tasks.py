"""Background jobs of the write pipeline. Tasks take ids, call services, and are idempotent."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from celery import shared_task
from django.db import OperationalError

from apps.audit.actors import Actor
from apps.pipeline import jobs
from apps.pipeline.lifecycle import lifecycle_sweep_all
from memoryhub.tasks import after_commit

if TYPE_CHECKING:
    from celery import Task

logger = logging.getLogger(__name__)


@shared_task(name="pipeline.run_ingest_job", bind=True, max_retries=None)
def run_ingest_job(self: Task[[str], None], job_id: str) -> None:
    """An ingest job on a worker. Idempotent: a finished job is left as it is, and the work
    and the job's status commit together, so a redelivery after a killed worker does it
    exactly once."""
    delay = jobs.ingest_attempt(job_id, self.request.retries)
    if delay is not None:
        raise self.retry(countdown=delay)


def enqueue_ingest_job(job_id: str) -> None:
    """Queue a job's task after any enclosing transaction commits. If the broker cannot take
    it, the job stays queued (its turns are stored) and the periodic requeue or a retried
    request sends it again: the task is idempotent (the jobs table is the outbox)."""
    after_commit(
        run_ingest_job,
        job_id,
        inline=lambda: run_ingest_job.delay(job_id),  # eager: the task's own retry rules
        what=f"job {job_id} (it stays queued for the requeue)",
    )


@shared_task(
    name="pipeline.run_document_job",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def run_document_job(job_id: str) -> None:
    """Embed a large document's chunks on a worker. Idempotent: see jobs.document_job_run."""
    jobs.document_job_run(job_id=job_id)


def enqueue_document_job(job_id: str) -> None:
    """Queue a document job after commit; if the broker cannot take it the job stays queued
    for the requeue, and a retried request (same Idempotency-Key) sends it again."""
    after_commit(
        run_document_job,
        job_id,
        inline=lambda: run_document_job.delay(job_id),
        what=f"job {job_id} (it stays queued for the requeue)",
    )


@shared_task(name="pipeline.requeue_stale_jobs")
def requeue_stale_jobs() -> int:
    """Queue again the ingest and document jobs whose enqueue was lost (on beat)."""
    claimed = jobs.stale_ingest_jobs_claim()
    for job_id in claimed:
        enqueue_ingest_job(job_id)
    documents = jobs.stale_ingest_jobs_claim(kind=jobs.DOCUMENT)
    for job_id in documents:
        enqueue_document_job(job_id)
    return len(claimed) + len(documents)


@shared_task(
    name="pipeline.lifecycle_sweep",
    autoretry_for=(OperationalError,),
    max_retries=5,
)
def lifecycle_sweep(dry_run: bool = False) -> list[dict]:
    """TTL expiry, retention, the per-subject cap and summaries of old episodes, for every
    namespace (on Celery beat). Idempotent; retried with backoff when the database is away."""
    reports = lifecycle_sweep_all(actor=Actor.system("lifecycle"), dry_run=dry_run)
    return [report.as_dict() for report in reports]
