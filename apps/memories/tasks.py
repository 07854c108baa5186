"""Background jobs of the memory store. Tasks take ids, hold no logic, and are idempotent."""

from __future__ import annotations

from celery import shared_task
from django.db import connection


@shared_task(name="memories.vacuum_data_keys")
def vacuum_data_keys() -> None:
    """Reclaim dead rows of the data-key table after an erasure.

    A deleted row lingers in its page until VACUUM; for data keys that would leave a wrapped
    (KEK-decryptable) copy of an erased subject's key on disk. The table is small, so this
    is quick; it runs after the erasure commits (VACUUM cannot run inside a transaction).
    """
    with connection.cursor() as cursor:
        cursor.execute("VACUUM memories_datakey")


class TransientJobError(Exception):
    """Worth retrying (an endpoint down or slow); the message is content-free."""


@shared_task(
    name="memories.run_ingest_job",
    bind=True,
    autoretry_for=(TransientJobError,),
    max_retries=3,
    retry_backoff=2,
    retry_backoff_max=30,
)
def run_ingest_job(self, job_id: str) -> str:  # type: ignore[no-untyped-def]
    """Extraction and consolidation of an ingest job. Idempotent: a finished job is left as it
    is; the work and the job's status commit together, so a redelivery after a killed worker
    does it exactly once. After the last retry the job is marked failed with the reason; its
    turns stay stored."""
    from apps.memories.ingestion import ingest_job_run, job_fail

    try:
        return str(ingest_job_run(job_id=job_id).status)
    except TransientJobError as error:
        if self.request.retries >= self.max_retries:
            job_fail(
                job_id=job_id, reason=f"gave up after {self.request.retries + 1} attempts: {error}"
            )
            return "failed"
        raise
    except Exception as error:  # a bug or invalid output: not retried, recorded
        job_fail(job_id=job_id, reason=f"{type(error).__name__}: {error}"[:500])
        return "failed"
