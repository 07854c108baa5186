"""The periodic requeue of ingest jobs whose enqueue was lost: a queued job older than the
cut-off is claimed once (a second claim right after finds nothing), recent and finished jobs
are left alone, and the requeued job then does its work."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.actors import Actor
from apps.memories.models import Memory
from apps.pipeline import jobs
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.models import Job, JobStatus, Message
from apps.pipeline.tasks import requeue_stale_jobs
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


def lost_job(tenant: Tenant, settings, *, age: timedelta, session: str = "s1") -> Job:
    """An ingest job whose task never reached a broker: its turns are stored and it stays
    queued (the enqueue runs on commit, which never comes inside the test's transaction),
    last touched `age` ago."""
    settings.CELERY_TASK_ALWAYS_EAGER = False  # enqueue instead of running it in-process
    job, _ = messages_ingest(
        actor=ACTOR,
        namespace=tenant.namespace,
        subject_external_id="u1",
        session_external_id=session,
        messages=[IncomingMessage("user", f"I am allergic to peanuts ({session}).")],
    )
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert job.status == JobStatus.QUEUED
    Job.objects.filter(pk=job.pk).update(updated_at=timezone.now() - age)
    return job


@pytest.mark.django_db
def test_a_stale_queued_job_is_claimed_once(acme: Tenant, settings) -> None:
    job = lost_job(acme, settings, age=timedelta(minutes=11))
    assert jobs.stale_ingest_jobs_claim() == [str(job.id)]
    assert jobs.stale_ingest_jobs_claim() == []  # the claim moved it past the cut-off
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED
    assert timezone.now() - job.updated_at < timedelta(seconds=30)


@pytest.mark.django_db
def test_a_recently_queued_job_is_not_claimed(acme: Tenant, settings) -> None:
    lost_job(acme, settings, age=timedelta(minutes=9))
    assert jobs.stale_ingest_jobs_claim() == []


@pytest.mark.django_db
def test_the_cut_off_is_the_one_given(acme: Tenant, settings) -> None:
    job = lost_job(acme, settings, age=timedelta(minutes=2))
    assert jobs.stale_ingest_jobs_claim(older_than_seconds=180) == []
    assert jobs.stale_ingest_jobs_claim(older_than_seconds=60) == [str(job.id)]


@pytest.mark.django_db
@pytest.mark.parametrize("status", [JobStatus.RUNNING, JobStatus.SUCCEEDED, JobStatus.FAILED])
def test_a_stale_job_that_is_not_queued_is_not_claimed(acme: Tenant, settings, status: str) -> None:
    job = lost_job(acme, settings, age=timedelta(hours=1))
    Job.objects.filter(pk=job.pk).update(status=status)
    assert jobs.stale_ingest_jobs_claim() == []


@pytest.mark.django_db
def test_a_stale_queued_job_of_another_kind_is_not_claimed(acme: Tenant, settings) -> None:
    job = lost_job(acme, settings, age=timedelta(hours=1))
    Job.objects.filter(pk=job.pk).update(kind="document")
    assert jobs.stale_ingest_jobs_claim() == []


@pytest.mark.django_db
def test_only_the_stale_one_of_several_jobs_is_claimed(acme: Tenant, settings) -> None:
    stale = lost_job(acme, settings, age=timedelta(hours=1), session="old")
    lost_job(acme, settings, age=timedelta(seconds=5), session="new")
    assert jobs.stale_ingest_jobs_claim() == [str(stale.id)]


@pytest.mark.django_db
def test_the_requeue_task_sends_a_lost_job_again_and_it_is_done_once(
    acme: Tenant, settings, django_capture_on_commit_callbacks
) -> None:
    job = lost_job(acme, settings, age=timedelta(minutes=15))
    assert not Memory.objects.exists()
    with django_capture_on_commit_callbacks(execute=True) as sent:
        assert requeue_stale_jobs() == 1
    # One task, sent after commit; it ran in-process (no broker). (The job's metrics are
    # counted after commit too.)
    tasks = [c for c in sent if c.__qualname__.startswith("enqueue_ingest_job")]
    assert len(tasks) == 1
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.result["messages"] == Message.objects.filter(session__subject=job.subject).count()
    assert Memory.objects.filter(subject=job.subject).exists()
    with django_capture_on_commit_callbacks(execute=True) as sent_again:
        assert requeue_stale_jobs() == 0
    assert sent_again == []
