"""Background jobs of the governance pages. Tasks take ids, call the work, and are
idempotent."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction
from kombu.exceptions import OperationalError as BrokerError

from apps.governance.purge import purge_job_run
from apps.governance.rollups import overview_snapshots_refresh

if TYPE_CHECKING:
    from celery.contrib.django.task import DjangoTask

logger = logging.getLogger(__name__)


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
    if settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: purge_job_run(job_id=job_id))
        return
    try:
        cast("DjangoTask[[str], None]", run_purge_job).delay_on_commit(job_id)
    except BrokerError:
        logger.warning("Could not queue purge job %s; it stays queued.", job_id)


@shared_task(name="governance.refresh_overviews", autoretry_for=(OperationalError,), max_retries=3)
def refresh_overviews() -> int:
    """Keep the overview's rollups fresh (on beat, every minute)."""
    return overview_snapshots_refresh()
