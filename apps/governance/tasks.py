"""Background jobs of the governance pages. Tasks take ids, call the work, and are
idempotent."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from apps.governance.purge import purge_job_run
from apps.governance.rollups import overview_snapshots_refresh
from memoryhub.tasks import after_commit


@shared_task(
    name="governance.run_purge_job",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def run_purge_job(job_id: str) -> None:
    """A purge on a worker. Idempotent: each batch commits with the job's progress, so a
    redelivery after a killed worker goes on from the last commit; a finished job is left."""
    purge_job_run(job_id=job_id)


def enqueue_purge_job(job_id: str) -> None:
    """Run the purge after the enclosing transaction commits: on a worker, or without a
    broker in this process. If the broker cannot take it, the job stays queued."""
    after_commit(
        run_purge_job,
        job_id,
        inline=lambda: purge_job_run(job_id=job_id),
        what=f"purge job {job_id}",
    )


@shared_task(name="governance.refresh_overviews", autoretry_for=(OperationalError,), max_retries=3)
def refresh_overviews() -> int:
    """Keep the overview's rollups fresh (on beat, every minute)."""
    return overview_snapshots_refresh()
