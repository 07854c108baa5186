"""Scheduled erasures on a real Celery worker on Redis: a worker SIGKILLed inside one
erasure leaves that subject whole (its transaction rolled back, still scheduled), and the
next worker erases it exactly once."""

from __future__ import annotations

import signal
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.models import DataKey, Memory, Subject
from apps.memories.services import NewMemory, memories_create_bulk
from apps.privacy.models import ScheduledErasure
from apps.privacy.tasks import erase_due
from tests.conftest import Tenant, stop_process
from tests.pipeline.test_worker import (  # noqa: F401
    blocker_connection,
    broker,
    start_worker,
    wait_for,
    waits_on_a_lock,
)

ACTOR = Actor.system("tests")


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_s_erasure_is_done_by_the_next_exactly_once(
    acme: Tenant,
    broker: tuple[str, str],  # noqa: F811
) -> None:
    redis_url, queue = broker
    memories_create_bulk(
        actor=ACTOR,
        namespace=acme.namespace,
        items=[
            NewMemory(content=f"Note {i} of {who}.", subject_external_id=who)
            for who in ("free", "held")
            for i in range(4)
        ],
        embed=False,
    )
    subjects = {s.external_id: s for s in Subject.objects.filter(namespace=acme.namespace)}
    for subject in subjects.values():
        ScheduledErasure.objects.create(
            namespace=acme.namespace, subject=subject, run_at=timezone.now() - timedelta(minutes=1)
        )
    held = subjects["held"]
    # A lock on one of held's memories stops the worker inside held's erasure, after its
    # data key's DELETE and before its commit.
    blocker = blocker_connection()
    locked = Memory.objects.filter(subject=held).values_list("pk", flat=True)[0]
    blocker.execute("SELECT 1 FROM memories_memory WHERE id = %s FOR UPDATE", [locked])
    first = start_worker(redis_url, queue)
    second = None
    try:
        erase_due.delay()

        wait_for(lambda: waits_on_a_lock(blocker))
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)
        blocker.rollback()
        # Held's erasure died with its transaction: subject, key, memories and schedule stay.
        assert Subject.objects.filter(pk=held.pk).exists()
        assert DataKey.objects.filter(subject=held).exists()
        assert Memory.objects.filter(subject=held).count() == 4
        assert ScheduledErasure.objects.filter(subject_id=held.pk).exists()
        assert not AuditEvent.objects.filter(action="subject.erase", subject_id=held.pk).exists()

        second = start_worker(redis_url, queue)  # the unacknowledged task comes back to it
        erase_due.delay()  # and the beat's next tick: finds nothing left to take
        wait_for(lambda: not ScheduledErasure.objects.exists(), timeout=120)
        assert not Subject.objects.filter(namespace=acme.namespace).exists()
        assert not Memory.objects.filter(namespace=acme.namespace).exists()
        assert not DataKey.objects.filter(subject_id__in=[s.pk for s in subjects.values()]).exists()
        for subject in subjects.values():  # each erased once: one receipt each
            receipts = AuditEvent.objects.filter(action="subject.erase", subject_id=subject.pk)
            assert receipts.count() == 1
    finally:
        blocker.close()
        stop_process(first)
        if second is not None:
            stop_process(second)
