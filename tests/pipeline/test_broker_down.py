"""With the task broker down (a Redis that refuses connections), a write that starts work
still answers as it would, and loses nothing: its job stays queued in its table (the outbox)
for the periodic requeue, which sends it once the broker is back. Recall and context need no
broker. The error comes when the task is sent, after the commit, so the test commits for
real."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memories.models import DataKey, Memory, Subject
from apps.pipeline.models import Job, JobStatus, Message
from apps.pipeline.tasks import requeue_stale_jobs
from memoryhub.celery import app
from tests.conftest import Tenant

REFUSING_BROKER = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture
def broker_down(settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    saved = (app.conf.broker_url, app.conf.task_always_eager)

    def reset_pools() -> None:  # the next send opens a connection to the current broker_url
        app._pool = None
        app.amqp._producer_pool = None

    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.task_always_eager = False
    app.conf.broker_url = REFUSING_BROKER
    reset_pools()
    try:
        yield
    finally:
        app.conf.broker_url, app.conf.task_always_eager = saved
        reset_pools()


@pytest.mark.django_db(transaction=True)
def test_messages_are_accepted_and_kept_queued_while_the_broker_is_down(
    acme: Tenant, broker_down: None
) -> None:
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": [{"role": "user", "content": "I live in Lyon and I work as a baker."}],
    }
    response = acme.client.post(acme.url("messages"), body, format="json")
    assert response.status_code == 202, response.content  # not a 500 after the commit
    job = Job.objects.get(pk=response.json()["id"])
    assert job.status == JobStatus.QUEUED  # the outbox: the requeue sends it when Redis is back
    assert Message.objects.filter(session__subject__external_id="u1").count() == 1


@pytest.mark.django_db(transaction=True)
def test_recall_and_context_work_and_the_outbox_is_sent_when_the_broker_returns(
    acme: Tenant, broker_down: None
) -> None:
    stored = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "I moved to Lyon in May."}, format="json"
    )
    assert stored.status_code == 201, stored.content
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": [{"role": "user", "content": "My favourite colour is green."}],
    }
    accepted = acme.client.post(acme.url("messages"), body, format="json")
    assert accepted.status_code == 202, accepted.content
    # Reads need no broker.
    recalled = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "Where do I live?"}, format="json"
    )
    assert recalled.status_code == 200, recalled.content
    assert [hit["memory"]["id"] for hit in recalled.json()["results"]][:1] == [stored.json()["id"]]
    context = acme.client.post(
        acme.url("context"), {"subject": "u1", "query": "Where do I live?"}, format="json"
    )
    assert context.status_code == 200, context.content
    assert "Lyon" in " ".join(m["content"] for m in context.json()["messages"])
    job = Job.objects.get(pk=accepted.json()["id"])
    assert job.status == JobStatus.QUEUED
    assert Memory.objects.count() == 1  # the job has not run: nothing extracted yet

    # The broker is back (tasks run in-process again, as when Redis answers): the beat's
    # requeue sends the kept job, which then runs once.
    app.conf.broker_url, app.conf.task_always_eager = "memory://", True
    Job.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    assert requeue_stale_jobs() == 1
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.status
    assert requeue_stale_jobs() == 0
    recalled = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "favourite colour"}, format="json"
    )
    contents = [hit["memory"]["content"] for hit in recalled.json()["results"]]
    assert "My favourite colour is green." in contents  # the turn, stored by the job
    assert "The user's favourite colour is green." in contents  # and the fact it states


@pytest.mark.django_db(transaction=True)
def test_an_erasure_completes_and_shreds_the_key_while_the_broker_is_down(
    acme: Tenant, broker_down: None
) -> None:
    created = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "A secret"}, format="json"
    )
    assert created.status_code == 201
    subject = Subject.objects.get(external_id="u1")
    erased = acme.client.post(acme.url("subjects/u1/erase"), format="json")
    assert erased.status_code == 200, erased.content
    assert not DataKey.objects.filter(subject_id=subject.pk).exists()
