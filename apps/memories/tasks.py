"""Background jobs of the memory store. Tasks take ids, hold no logic, and are idempotent."""

from __future__ import annotations

import logging
import time

from celery import shared_task
from django.db import OperationalError, connection

logger = logging.getLogger(__name__)


@shared_task(name="memories.vacuum_data_keys")
def vacuum_data_keys() -> None:
    """Reclaim dead rows of the data-key table after an erasure.

    A deleted row lingers in its page until VACUUM; for data keys that would leave a wrapped
    (KEK-decryptable) copy of an erased subject's key on disk. The table is small, so this
    is quick; it runs after the erasure commits (VACUUM cannot run inside a transaction).
    """
    with connection.cursor() as cursor:
        cursor.execute("VACUUM memories_datakey")


def ingest_attempt(job_id: str, retries: int) -> float | None:
    """One attempt at an ingest job; returns the delay before the next attempt, or None once
    the job is finished (succeeded, or failed with its reason).

    An LLM endpoint that is down, slow or answers garbage is retried MEMORYHUB_JOB_RETRIES
    times with exponential backoff; then the job fails, its turns staying stored. A refusal
    (4xx) or any other error fails the job at once; for an unexpected error only its type is
    kept (a database error's text can quote row values).
    """
    from django.conf import settings

    from apps.memories.ingestion import ingest_job_run, job_fail
    from apps.memories.llm import LlmOutputError, LlmRefused, LlmUnavailable

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


@shared_task(name="memories.run_ingest_job", bind=True, max_retries=None)
def run_ingest_job(self, job_id: str) -> None:  # type: ignore[no-untyped-def]
    """An ingest job on a worker. Idempotent: a finished job is left as it is, and the work
    and the job's status commit together, so a redelivery after a killed worker does it
    exactly once."""
    delay = ingest_attempt(job_id, self.request.retries)
    if delay is not None:
        raise self.retry(countdown=delay)


def run_ingest_job_inline(job_id: str) -> None:
    """The same, without a broker: in this process, retries included (the request waits)."""
    retries = 0
    while (delay := ingest_attempt(job_id, retries)) is not None:
        time.sleep(delay)
        retries += 1


@shared_task(name="memories.requeue_stale_jobs")
def requeue_stale_jobs() -> int:
    """Queue again the ingest jobs whose enqueue was lost (on beat)."""
    from apps.memories.ingestion import requeue_stale_jobs as requeue

    return requeue()


@shared_task(name="memories.subject_indexes")
def subject_indexes() -> dict:
    """Create and drop the partial HNSW indexes of the largest subjects (on beat)."""
    from dataclasses import asdict

    from apps.memories.subject_indexes import refresh

    return asdict(refresh())


@shared_task(
    name="memories.lifecycle_sweep",
    autoretry_for=(OperationalError,),
    max_retries=5,
)
def lifecycle_sweep(dry_run: bool = False) -> list[dict]:
    """TTL expiry, retention, the per-subject cap and summaries of old episodes, for every
    namespace (on Celery beat). Idempotent; retried with backoff when the database is away."""
    from apps.audit.actors import Actor
    from apps.memories.lifecycle import lifecycle_sweep_all

    reports = lifecycle_sweep_all(actor=Actor.system("lifecycle"), dry_run=dry_run)
    return [report.as_dict() for report in reports]
