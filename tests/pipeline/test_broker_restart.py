"""The task broker restarted under a real worker and a real beat. Redis (a server of the
test's own, which keeps nothing on disk) stops while one ingest job runs on the worker and
another waits in its queue; a third is written while it is down; then it starts again on the
same port, empty. The running job finishes during the outage; the message the restart lost
and the send Redis refused are sent again by beat's requeue (`pipeline.requeue_stale_jobs`,
its interval and cut-off shortened to seconds), and every job's memories are stored exactly
once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

import pytest

from apps.audit.models import AuditEvent
from apps.audit.selectors import audit_chain_verify
from apps.memories.models import Memory
from apps.pipeline.models import Job, JobStatus, Message
from tests.conftest import PROJECT_ROOT, Tenant, stop_process
from tests.memories.embeddings_stub import StubEmbeddings
from tests.pipeline.test_worker import (
    blocker_connection,
    celery_env,
    enqueuing_on,
    start_worker,
    waits_on_a_lock,
)
from tests.redis_server import RedisServer

QUEUE = "memoryhub"  # the broker is the test's own: the default queue is free
DEADLINE_SECONDS = 60.0
BEAT_SEND_FAILED = "Message Error"  # what beat logs when it cannot send a due task


def poll(
    condition: Callable[[], bool],
    what: str,
    logs: Path,
    processes: Mapping[str, subprocess.Popen[str]],
) -> None:
    """Wait until `condition` holds; fail, with the logs in `logs`, past the deadline or as
    soon as one of the (named) `processes` has exited."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        exited = [name for name, process in processes.items() if process.poll() is not None]
        if exited or time.monotonic() > deadline:
            cause = f"{' and '.join(exited)} exited" if exited else "timed out"
            tails = "\n".join(f"--- {log.name}\n{read(log)[-3000:]}" for log in logs.glob("*.log"))
            raise AssertionError(f"{cause} waiting for {what}\n{tails}")
        time.sleep(0.1)


def start_beat(env: dict[str, str], directory: Path, output: IO[str]) -> subprocess.Popen[str]:
    """`celery -A memoryhub beat`, its schedule file in `directory`, its log to `output`."""
    return subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "memoryhub", "beat", "--loglevel=INFO",
            "--schedule", str(directory / "beat-schedule"),
        ],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip


def read(path: Path) -> str:
    return path.read_text(errors="replace")


def ingest(tenant: Tenant, subject: str, content: str) -> str:
    """POST one user turn to /messages; the job's id (202: accepted, broker or not)."""
    body = {"subject": subject, "session": "s1", "messages": [{"role": "user", "content": content}]}
    response = tenant.client.post(tenant.url("messages"), body, format="json")
    assert response.status_code == 202, response.content
    return str(response.json()["id"])


def status(job_id: str) -> str:
    return str(Job.objects.get(pk=job_id).status)


def queued_task_arguments(server: RedisServer) -> list[str]:
    """The arguments of the task messages waiting in the queue, as kombu stores them."""
    return [json.loads(raw)["headers"]["argsrepr"] for raw in server.client().lrange(QUEUE, 0, -1)]


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_it_sends_the_jobs_a_broker_restart_lost_or_refused_once_it_is_back(
    acme: Tenant, redis_server: RedisServer, settings, tmp_path: Path
) -> None:
    processes: dict[str, subprocess.Popen[str]] = {}
    with (
        blocker_connection() as blocker,
        StubEmbeddings() as embeddings,
        enqueuing_on(redis_server.url, QUEUE, settings),
        (tmp_path / "worker.log").open("w") as worker_log,
        (tmp_path / "beat.log").open("w") as beat_log,
    ):
        env = {
            **celery_env(redis_server.url, QUEUE),
            "MEMORYHUB_REQUEUE_INTERVAL_SECONDS": "1",
            "MEMORYHUB_REQUEUE_AFTER_SECONDS": "2",
            # A remote embedder: the worker starts without loading the local model.
            "MEMORYHUB_EMBEDDING_PROVIDER": "openai",
            "MEMORYHUB_EMBEDDING_URL": embeddings.url,
        }
        try:
            # Inserts into the consolidation log wait: the worker's first job stops there,
            # its memories inserted in its open transaction, until the lock is released.
            blocker.execute("LOCK TABLE memories_consolidationlog IN SHARE MODE")
            processes["worker"] = start_worker(redis_server.url, QUEUE, env=env, output=worker_log)
            processes["beat"] = start_beat(env, tmp_path, beat_log)

            running = ingest(acme, "u1", "I live in Lyon.")
            poll(
                lambda: waits_on_a_lock(blocker),
                "the worker to take the first job",
                tmp_path,
                processes,
            )
            waiting = ingest(acme, "u2", "My favourite colour is green.")
            assert any(waiting in arguments for arguments in queued_task_arguments(redis_server))

            redis_server.stop()  # the waiting job's message goes with it
            refused = ingest(acme, "u3", "I work as a baker.")  # sent while Redis is down
            assert status(refused) == JobStatus.QUEUED  # kept in the outbox
            poll(
                lambda: BEAT_SEND_FAILED in read(tmp_path / "beat.log"),
                "beat to fail a send",
                tmp_path,
                processes,
            )

            blocker.rollback()  # the running job goes on, and commits with Redis still down
            poll(
                lambda: status(running) != JobStatus.QUEUED,
                "the running job to end",
                tmp_path,
                processes,
            )
            assert status(waiting) == status(refused) == JobStatus.QUEUED

            redis_server.start()  # the same port, empty
            poll(
                lambda: JobStatus.QUEUED not in {status(waiting), status(refused)},
                "the requeue to send the lost and the refused job, and the worker to do them",
                tmp_path,
                processes,
            )
        finally:
            for process in processes.values():
                process.terminate()  # both shut down at once
            for process in processes.values():
                stop_process(process)

    # The worker ran on the transport that survives this (memoryhub/broker.py): on kombu's
    # own, a worker whose broker went away mid-poll may exit instead of reconnecting.
    assert "memoryhub.broker:RedisTransport" in read(tmp_path / "worker.log")
    assert Message.objects.count() == 3  # every turn was kept
    for job_id, subject in ((running, "u1"), (waiting, "u2"), (refused, "u3")):
        job = Job.objects.get(pk=job_id)
        assert job.status == JobStatus.SUCCEEDED, job.error
        assert job.attempts == 1  # done once, however many times it was sent
        memories = Memory.objects.filter(subject__external_id=subject)
        assert sorted(memories.values_list("kind", flat=True)) == ["episodic", "semantic"]
        assert sorted(job.result["memories"]) == sorted(
            str(pk) for pk in memories.values_list("pk", flat=True)
        )
        succeeded = AuditEvent.objects.filter(action="job.ingest.succeeded", object_id=job_id)
        assert succeeded.count() == 1
    assert audit_chain_verify()[1] is None
