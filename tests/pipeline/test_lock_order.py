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
from apps.memories.services import memory_create
from apps.pipeline import ingestion, jobs
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.models import Job, JobStatus
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


def _waiting_on_a_lock() -> bool:
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_an_ingest_job_and_a_write_of_its_subject_commit_side_by_side(
    acme: Tenant, settings, monkeypatch
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(ingestion, "enqueue_ingest_job", lambda job_id: None)  # kept queued
    memory_create(actor=ACTOR, namespace=acme.namespace, subject_external_id="u1", content="Hi")
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

    def write() -> None:
        from django.db import transaction

        try:
            with transaction.atomic():
                memory_create(
                    actor=ACTOR,
                    namespace=acme.namespace,
                    subject_external_id="u1",
                    content="My sister is called Ana.",
                )
                written.set()
                release.wait(30)  # the commit (and its key check) comes after the job waits
        except BaseException as error:
            errors.append(error)
        finally:
            written.set()
            connection.close()

    def run_job() -> None:
        try:
            jobs.ingest_job_run(job_id=str(job.pk))
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    assert written.wait(30)
    worker = threading.Thread(target=run_job)
    worker.start()
    deadline = time.monotonic() + 30
    while not _waiting_on_a_lock():  # the job waits for the chain head the write holds
        assert time.monotonic() < deadline, "the job never waited for the write"
        time.sleep(0.05)
    release.set()
    writer.join(60)
    worker.join(60)

    assert errors == []
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED
