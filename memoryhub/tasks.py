"""Diagnostic tasks of the project itself."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="memoryhub.ping")
def ping(payload: str = "") -> dict[str, str]:
    """Answer with the payload: proves a broker and a worker carry a task both ways."""
    import os

    return {"pong": payload, "worker_pid": str(os.getpid())}
