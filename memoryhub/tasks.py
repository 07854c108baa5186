"""Diagnostic tasks of the project itself, and how apps start background work after a
commit."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError

logger = logging.getLogger(__name__)


def after_commit(
    task: Any,
    *args: Any,
    inline: Callable[[], object],
    what: str,
    refused: Callable[[], object] | None = None,
) -> None:
    """Start work once the enclosing transaction commits: the Celery `task` with `args` on a
    worker, or, without a broker, `inline` in this process. If the broker cannot take it
    (Redis down: the error comes at commit, when the task is sent), it is logged (`what`: ids
    only) and `refused` runs (default: the work stays queued in its table, for a requeue).
    The request that made the work still succeeds: what it committed stands."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(inline)
        return

    def send() -> None:
        try:
            task.delay(*args)
        except BrokerError:
            logger.warning("Could not queue %s.", what)
            if refused is not None:
                refused()

    transaction.on_commit(send)


@shared_task(name="memoryhub.ping")
def ping(payload: str = "") -> dict[str, str]:
    """Answer with the payload: proves a broker and a worker carry a task both ways."""
    import os

    return {"pong": payload, "worker_pid": str(os.getpid())}
