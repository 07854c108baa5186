"""An ingest job and a write of the same subject, at once, in two transactions: both commit.

The write appends to the audit chain (holding its head until commit) and inserts a memory
whose foreign key to the subject is checked at commit (`FOR KEY SHARE`). The job locks the
subject, then appends to the chain. Had the job locked the subject `FOR UPDATE`, the write's
commit would wait for the job and the job for the chain head: a deadlock, which the load test
found (a 503 for the write, or a failed job). The job's lock is `FOR NO KEY UPDATE`, which
keeps jobs of one subject in order without blocking key checks.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections

from apps.audit.actors import Actor
from apps.memories.services import NewMemory, memory_create
from apps.pipeline import ingestion, jobs
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.models import Job, JobStatus
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _blocked_by(waiting: list[int], holding: list[int]) -> bool:
    """Whether the backend in `waiting` waits for a lock the one in `holding` holds."""
    if not waiting or not holding:
        return False
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT %s = ANY(pg_blocking_pids(%s))", [holding[0], waiting[0]])
        return bool(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_an_ingest_job_and_a_write_of_its_subject_commit_side_by_side(
    acme: Tenant, settings, monkeypatch
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(ingestion, "enqueue_ingest_job", lambda job_id: None)  # kept queued
    memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u1", content="Hi"),
    )
    job, _ = messages_ingest(
        actor=ACTOR,
        namespace=acme.namespace,
        subject_external_id="u1",
        session_external_id="s1",
        messages=[IncomingMessage(role="user", content="I live in Lyon and work as a baker.")],
    )
    assert Job.objects.get(pk=job.pk).status == JobStatus.QUEUED

    written, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    writer_pid: list[int] = []
    job_pid: list[int] = []

    def write() -> None:
        from django.db import transaction

        try:
            writer_pid.append(_backend_pid())
            with transaction.atomic():
                memory_create(
                    actor=ACTOR,
                    namespace=acme.namespace,
                    item=NewMemory(subject_external_id="u1", content="My sister is called Ana."),
                )
                written.set()
                release.wait()  # the commit (and its key check) comes after the job waits
        except BaseException as error:
            errors.append(error)
        finally:
            written.set()
            connection.close()

    def run_job() -> None:
        try:
            job_pid.append(_backend_pid())
            jobs.ingest_job_run(job_id=str(job.pk))
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    writer = threading.Thread(target=write)
    worker = threading.Thread(target=run_job)
    writer.start()
    try:
        assert written.wait(120), "the write did not get as far as its commit"
        worker.start()
        # The job waits for the chain head the write holds: a condition, polled.
        deadline = time.monotonic() + 120
        while not _blocked_by(job_pid, writer_pid):
            assert worker.is_alive(), errors or "the job finished without waiting for the write"
            assert time.monotonic() < deadline, "the job never waited for the write"
            time.sleep(0.05)
    finally:
        release.set()
        writer.join()
        if worker.ident is not None:  # started
            worker.join()

    assert errors == []
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED
