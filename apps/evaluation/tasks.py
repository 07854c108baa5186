"""Background jobs of recall quality review. Tasks take ids, call the work, and are
idempotent."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from apps.evaluation.runs import run_work
from memoryhub.tasks import after_commit


@shared_task(
    name="evaluation.run",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def run_eval(run_id: str) -> None:
    """A run on a worker. Idempotent: each case's result commits with the run's progress,
    so a redelivery after a killed worker asks only the cases left; a finished run is left."""
    run_work(run_id=run_id)


def enqueue_run(run_id: str) -> None:
    """Work the run after the enclosing transaction commits: on a worker, or without a
    broker in this process. If the broker cannot take it, the run stays queued."""
    after_commit(
        run_eval, run_id, inline=lambda: run_work(run_id=run_id), what=f"eval run {run_id}"
    )
