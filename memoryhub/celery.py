"""The Celery application.

Broker from CELERY_BROKER_URL; without one, tasks run eagerly in the calling process, so
the embedded quickstart needs no broker. Defaults (settings, `CELERY_` prefix): JSON only,
late acks, redelivery when a worker dies mid-task, prefetch of one.

Tasks are enqueued after the surrounding transaction commits: call `task.delay_on_commit()`
(or `apply_async_on_commit()`) from services, so a rolled-back write never starts work and
a worker never looks for a row that is not committed yet.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from celery import Celery
from celery.contrib.django.task import DjangoTask
from celery.signals import (
    task_failure,
    task_postrun,
    task_prerun,
    task_retry,
    task_success,
    worker_process_init,
    worker_process_shutdown,
    worker_shutdown,
)

from memoryhub import maintenance, metrics_directory, replica, tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")


def _a_celery_worker() -> bool:
    """Started as `celery … worker` (or `python -m celery … worker`)."""
    program = Path(sys.argv[0]) if sys.argv else Path()
    by_celery = program.name == "celery" or program.parent.name == "celery"
    return by_celery and "worker" in sys.argv[1:]


# A worker writes its figures where the web processes of this machine read them: chosen
# here, before Django's set-up (the worker's first step) imports prometheus_client.
if _a_celery_worker():
    metrics_directory.use_shared_directory()


class MemoryHubTask(DjangoTask):
    """Base task: retried with exponential backoff and jitter on transient errors."""

    abstract = True
    retry_backoff = True
    retry_backoff_max = 600
    retry_jitter = True
    max_retries = 5

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # While a restore runs (memoryhub/maintenance.py) a worker takes no work: the task
        # goes back to the queue for later, not counted against its retries.
        if maintenance.restoring() and not self.request.is_eager:
            raise self.retry(countdown=RESTORE_RETRY_SECONDS, max_retries=None)
        return super().__call__(*args, **kwargs)


RESTORE_RETRY_SECONDS = 30


app = Celery("memoryhub", task_cls=MemoryHubTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Each job is a read scope (memoryhub/replica.py): its reads see what queued it, and its writes.
task_prerun.connect(replica.job_started)
task_postrun.connect(replica.job_finished)


# --- Traces (memoryhub/tracing.py): in each worker process, after the fork ------------------
@worker_process_init.connect
def _trace_this_process(**_: Any) -> None:
    tracing.set_up()


# --- Metrics (memoryhub/metrics.py): task outcomes, shared with gunicorn's processes ----------
# A pool's child, as it exits (in the child); the worker's own process, as it stops (a solo
# pool runs tasks there). A child killed outright sends nothing: it has no live gauges anyway.
@worker_process_shutdown.connect
def _child_exited(pid: int | None = None, **_: Any) -> None:
    metrics_directory.process_exited(pid or os.getpid())


@worker_shutdown.connect
def _worker_stopped(**_: Any) -> None:
    metrics_directory.process_exited(os.getpid())


def _count_task(outcome: str, sender: Any) -> None:
    from memoryhub import metrics

    metrics.celery_tasks.labels(task=getattr(sender, "name", "unknown"), outcome=outcome).inc()


@task_success.connect
def _task_succeeded(sender: Any = None, **_: Any) -> None:
    _count_task("succeeded", sender)


@task_failure.connect
def _task_failed(sender: Any = None, **_: Any) -> None:
    _count_task("failed", sender)


@task_retry.connect
def _task_retried(sender: Any = None, **_: Any) -> None:
    _count_task("retried", sender)
