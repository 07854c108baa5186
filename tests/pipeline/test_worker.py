"""A real Celery worker on Redis ingests a conversation; a worker SIGKILLed mid-task has its
task redelivered, and the effect happens exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO
from urllib.parse import quote

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from kombu import pools as kombu_pools

from apps.memories.models import Memory
from apps.pipeline.models import Job, Message
from memoryhub.celery import app
from tests.conftest import Tenant, stop_process

PROJECT_ROOT = Path(__file__).resolve().parents[2]
BODY = {
    "subject": "u1",
    "session": "s1",
    "messages": [
        {"role": "user", "content": "I live in Lyon."},
        {"role": "assistant", "content": "Lovely city!"},
        {"role": "user", "content": "My favourite colour is green."},
    ],
}


def _database_url() -> str:
    params = connection.settings_dict
    host = quote(str(params["HOST"]), safe="")
    return f"postgres://{params['USER']}@{host}:{params['PORT']}/{params['NAME']}"


# `celery -A memoryhub worker`, with the broker's sweep for unacknowledged messages every
# second: by default kombu sweeps about every 100 s (every 10th call, 10 s apart), so a
# killed worker's task, visible again after the tests' 3 s, would wait up to that long.
WORKER = """
import sys
from memoryhub.celery import app
app.conf.broker_transport_options = {
    **app.conf.broker_transport_options,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}
app.worker_main(["worker", *sys.argv[1:]])
"""


def celery_env(redis_url: str, queue: str) -> dict[str, str]:
    """The environment of a Celery process of the tests: the test database, this process's
    secrets, the broker and the queue given, and a 3 s visibility timeout."""
    return {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DEBUG": "1",
        "SECRET_KEY": settings.SECRET_KEY,
        "MEMORYHUB_KEK": settings.MEMORYHUB_KEK,
        "CELERY_BROKER_URL": redis_url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "MEMORYHUB_BROKER_VISIBILITY_TIMEOUT": "3",
        "HF_HUB_OFFLINE": "1",
    }


def start_worker(
    redis_url: str,
    queue: str,
    *,
    env: Mapping[str, str] | None = None,
    output: int | IO[str] = subprocess.DEVNULL,
) -> subprocess.Popen[str]:
    """A worker on `queue` (`env` over `celery_env`), its output to `output`."""
    return subprocess.Popen(
        [
            sys.executable, "-c", WORKER, "--pool=solo",
            "--queues", queue, "--without-gossip", "--without-mingle", "--without-heartbeat",
            "--loglevel=WARNING",
        ],
        cwd=PROJECT_ROOT,
        env={**celery_env(redis_url, queue), **(env or {})},
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip


@contextmanager
def enqueuing_on(redis_url: str, queue: str, settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """This process enqueues on Redis at `redis_url` (on `queue`) instead of running tasks
    inline; `settings` is pytest-django's fixture, which restores the setting after the test."""
    names = ("broker_url", "task_always_eager", "task_default_queue", "broker_transport_options")
    saved = {name: app.conf[name] for name in names}
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.update(
        broker_url=redis_url,
        task_always_eager=False,
        task_default_queue=queue,
        broker_transport_options={"visibility_timeout": 3},
    )
    _forget_broker_connections()  # the next send connects to this broker_url
    try:
        yield
    finally:
        app.conf.update(saved)
        _forget_broker_connections()  # closes this test's Redis connections


@pytest.fixture
def broker(redis_url: str, settings) -> Iterator[tuple[str, str]]:
    """This process enqueues on Redis (a queue of its own) instead of running tasks inline."""
    queue = f"test-{uuid.uuid4().hex[:8]}"
    with enqueuing_on(redis_url, queue, settings):
        yield redis_url, queue


def _forget_broker_connections() -> None:
    """Close every broker connection of this process through kombu's public reset (which
    also empties its pool registries) and drop the app's own handles on them, as Celery does
    after a fork: the next send opens a pool for the broker_url configured then."""
    kombu_pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


def blocker_connection() -> psycopg.Connection:
    """A connection of its own to the test database, to hold locks that stop a worker."""
    return psycopg.connect(
        host=connection.settings_dict["HOST"],
        port=connection.settings_dict["PORT"],
        user=connection.settings_dict["USER"],
        dbname=connection.settings_dict["NAME"],
    )


def waits_on_a_lock(blocker: psycopg.Connection) -> bool:
    """Whether some backend of the test database is waiting for a lock (fresh figures)."""
    blocker.execute("SELECT pg_stat_clear_snapshot()")
    row = blocker.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        " AND datname = current_database()"
    ).fetchone()
    return bool(row and row[0] > 0)


def wait_for(condition, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError("timed out")


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_worker_ingests_and_a_killed_worker_s_task_is_redone_exactly_once(
    acme: Tenant, broker: tuple[str, str]
) -> None:
    redis_url, queue = broker
    # Block inserts into the consolidation log: the worker's task waits at that write, after
    # it has inserted the memories in its still-open transaction.
    blocker = blocker_connection()
    blocker.execute("LOCK TABLE memories_consolidationlog IN SHARE MODE")
    first = start_worker(redis_url, queue)
    second = None
    try:
        response = acme.client.post(acme.url("messages"), BODY, format="json")
        assert response.status_code == 202, response.json()
        job_id = response.json()["id"]
        assert Message.objects.count() == 3  # the turns are stored before any extraction

        def worker_is_blocked() -> bool:
            job = Job.objects.get(pk=job_id)
            assert job.status == "queued", job.error
            return waits_on_a_lock(blocker)

        wait_for(worker_is_blocked)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)
        blocker.rollback()  # the killed worker's transaction is rolled back with its connection
        assert Memory.objects.count() == 0
        assert Job.objects.get(pk=job_id).status == "queued"

        second = start_worker(redis_url, queue)  # the unacknowledged task comes back to it
        wait_for(lambda: Job.objects.get(pk=job_id).status != "queued", timeout=120)
        job = Job.objects.get(pk=job_id)
        assert job.status == "succeeded", job.error
        assert Memory.objects.filter(kind="episodic").count() == 2
        assert Memory.objects.filter(kind="semantic").count() == 2
        assert len(job.result["memories"]) == 4
        status = acme.client.get(f"/api/v1/jobs/{job_id}").json()
        assert status["status"] == "succeeded"
    finally:
        blocker.close()
        stop_process(first)
        if second is not None:
            stop_process(second)
