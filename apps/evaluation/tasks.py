"""Background jobs of recall quality review. Tasks take ids, call the work, and are
idempotent."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction
from kombu.exceptions import OperationalError as BrokerError

from apps.evaluation.runs import run_work

if TYPE_CHECKING:
    from celery.contrib.django.task import DjangoTask

logger = logging.getLogger(__name__)


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
    if settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: run_work(run_id=run_id))
        return
    try:
        cast("DjangoTask[[str], None]", run_eval).delay_on_commit(run_id)
    except BrokerError:
        logger.warning("Could not queue eval run %s; it stays queued.", run_id)
