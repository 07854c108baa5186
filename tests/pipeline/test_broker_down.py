"""With the task broker down (a Redis that refuses connections), a write that starts work
still answers as it would, and loses nothing: its job stays queued in its table (the outbox)
for the periodic requeue. The error comes when the task is sent, after the commit, so the
test commits for real."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.memories.models import DataKey, Subject
from apps.pipeline.models import Job, JobStatus, Message
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
