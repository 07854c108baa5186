"""Purge by filter: the dry run says what would go; the owner's reason and typed slug start a
job that deletes in batches and leaves one content-free receipt; a job stopped part-way (a
killed worker, in-process or a real Celery worker on Redis) resumes without doing anything
twice."""

from __future__ import annotations

import signal
import time

import pytest

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.governance.purge import purge_job_run
from apps.governance.services import purge_start
from apps.memories.models import Memory, MemoryVersion
from apps.memories.services import NewMemory, memories_create_bulk
from apps.namespaces.models import Namespace
from apps.pipeline.models import Job
from apps.recall.models import RecallLog
from tests.conftest import Tenant, stop_process
from tests.governance.conftest import Cast
from tests.pipeline.test_worker import (  # noqa: F401
    blocker_connection,
    broker,
    start_worker,
    wait_for,
    waits_on_a_lock,
)

ACTOR = Actor.system("tests")


def old_memories(namespace: Namespace, count: int, tag: str = "old") -> list[Memory]:
    return memories_create_bulk(
        actor=ACTOR,
        namespace=namespace,
        items=[
            NewMemory(content=f"Old note number {i}.", subject_external_id=f"s{i % 3}", tags=[tag])
            for i in range(count)
        ],
        embed=False,
    )


def test_it_shows_the_dry_run_of_a_filter(cast: Cast) -> None:
    old = old_memories(cast.acme, 12)
    RecallLog.objects.create(namespace=cast.acme, actor_type="api_key", memory_ids=[old[0].pk])
    html = cast.client("olive").get("/n/acme/memories/purge/?tag=old").content.decode()
    assert '<strong id="purge-count">12</strong>' in html
    assert "of 3 subjects" in html
    assert "12 versions, and 1 recall-log rows" in html
    assert html.count("Old note number") == 10  # the sample of ten
    assert Memory.objects.filter(tags__contains=["old"]).count() == 12  # nothing deleted


def test_it_never_purges_a_namespace_unfiltered(cast: Cast) -> None:
    client = cast.client("olive")
    assert (
        "Choose filters in the explorer first"
        in client.get("/n/acme/memories/purge/").content.decode()
    )
    before = Memory.objects.count()
    client.post("/n/acme/memories/purge/", {"reason": "r", "confirmation": "acme", "expected": 1})
    assert Memory.objects.count() == before
    assert not Job.objects.filter(kind="purge", payload__filters={}).exists()


def test_it_starts_nothing_without_the_typed_slug(cast: Cast) -> None:
    old_memories(cast.acme, 3)
    jobs = Job.objects.filter(kind="purge").count()
    response = cast.client("olive").post(
        "/n/acme/memories/purge/?tag=old", {"reason": "r", "confirmation": "acm", "expected": 3}
    )
    assert "Type the namespace&#x27;s slug to confirm." in response.content.decode()
    assert Job.objects.filter(kind="purge").count() == jobs


def test_it_purges_what_the_dry_run_showed_and_leaves_a_receipt(
    cast: Cast, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    old = old_memories(cast.acme, 7)
    others = Memory.objects.exclude(tags__contains=["old"]).count()
    client = cast.client("olive")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/n/acme/memories/purge/?tag=old",
            {"reason": "old import", "confirmation": "acme", "expected": 7},
        )
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert '<dd id="receipt-memories">7</dd>' in page
    assert not Memory.objects.filter(pk__in=[m.pk for m in old]).exists()
    assert not MemoryVersion.objects.filter(memory_id__in=[m.pk for m in old]).exists()
    assert Memory.objects.count() == others
    job_id = response["Location"].rstrip("/").rsplit("/", 1)[-1]
    start, receipt = AuditEvent.objects.filter(object_type="job", object_id=job_id).order_by("id")
    assert (start.action, receipt.action) == ("memory.purge.start", "memory.purge")
    assert receipt.details["memories"] == 7
    assert receipt.details["reason"] == "old import"
    assert receipt.details["requested_by"] == "user:olive"
    assert "Old note" not in str(receipt.details) + str(start.details)


def test_it_resumes_a_stopped_purge_without_doing_anything_twice(cast: Cast, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_PURGE_BATCH = 4
    old_memories(cast.acme, 10)
    job = purge_start(
        actor=ACTOR, namespace=cast.acme, filters={"tag": "old"}, reason="r",
        confirmation="acme", expected=10,
    )  # fmt: skip

    def killed(batch: int) -> None:
        raise KeyboardInterrupt  # the worker dies after its first batch committed

    with pytest.raises(KeyboardInterrupt):
        purge_job_run(job_id=str(job.id), after_batch=killed)
    job.refresh_from_db()
    assert (job.status, job.result["done"]) == ("running", 4)
    assert Memory.objects.filter(tags__contains=["old"]).count() == 6
    assert not AuditEvent.objects.filter(action="memory.purge").exists()

    purge_job_run(job_id=str(job.id))
    purge_job_run(job_id=str(job.id))  # a redelivery of a finished job changes nothing
    job.refresh_from_db()
    assert (job.status, job.result["done"]) == ("succeeded", 10)
    assert not Memory.objects.filter(tags__contains=["old"]).exists()
    assert AuditEvent.objects.filter(action="memory.purge").count() == 1


def test_it_spares_memories_written_after_the_purge_started(cast: Cast) -> None:
    old_memories(cast.acme, 2)
    job = purge_start(
        actor=ACTOR, namespace=cast.acme, filters={"tag": "old"}, reason="r",
        confirmation="acme", expected=2,
    )  # fmt: skip
    Job.objects.filter(pk=job.pk).update(created_at=job.created_at)
    time.sleep(0.01)
    late = old_memories(cast.acme, 1)[0]
    purge_job_run(job_id=str(job.id))
    assert list(Memory.objects.filter(tags__contains=["old"])) == [late]


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_s_purge_is_finished_by_the_next_exactly_once(
    acme: Tenant,
    broker: tuple[str, str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    redis_url, queue = broker
    # Read by the worker processes (they inherit this environment); undone after the test.
    monkeypatch.setenv("MEMORYHUB_PURGE_BATCH", "10")
    old = sorted(old_memories(acme.namespace, 25), key=lambda memory: str(memory.pk))
    old_memories(acme.namespace, 3, tag="keep")
    # The second batch (pk order) must delete this recall-log row: a lock held on it stops
    # the worker inside its second batch, after the first has committed.
    RecallLog.objects.create(namespace=acme.namespace, actor_type="t", memory_ids=[old[0].pk])
    stopper = RecallLog.objects.create(
        namespace=acme.namespace, actor_type="t", memory_ids=[old[15].pk]
    )
    blocker = blocker_connection()
    blocker.execute("SELECT 1 FROM memories_recalllog WHERE id = %s FOR UPDATE", [stopper.pk])
    first = start_worker(redis_url, queue)
    second = None
    try:
        job = purge_start(
            actor=ACTOR, namespace=acme.namespace, filters={"tag": "old"}, reason="r",
            confirmation=acme.slug, expected=25,
        )  # fmt: skip

        def stopped_in_second_batch() -> bool:
            done = Job.objects.get(pk=job.pk).result["done"]
            return done == 10 and waits_on_a_lock(blocker)

        wait_for(stopped_in_second_batch)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)
        blocker.rollback()
        assert Job.objects.get(pk=job.pk).result["done"] == 10
        assert Memory.objects.filter(tags__contains=["old"]).count() == 15

        second = start_worker(redis_url, queue)  # the unacknowledged task comes back to it
        wait_for(lambda: Job.objects.get(pk=job.pk).status == "succeeded", timeout=120)
        finished = Job.objects.get(pk=job.pk)
        assert finished.result["done"] == 25
        assert finished.result["recall_log_rows"] == 2
        assert not Memory.objects.filter(tags__contains=["old"]).exists()
        assert Memory.objects.filter(tags__contains=["keep"]).count() == 3
        assert AuditEvent.objects.filter(action="memory.purge").count() == 1
    finally:
        blocker.close()
        stop_process(first)
        if second is not None:
            stop_process(second)
