import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from celery import Celery
from django.db import transaction

from memoryhub.tasks import ping
from tests.conftest import PROJECT_ROOT, stop_process


def test_without_a_broker_tasks_run_in_process() -> None:
    result = ping.delay("hello")
    assert result.get(timeout=5)["pong"] == "hello"
    assert result.get()["worker_pid"] == str(os.getpid())


@pytest.mark.django_db(transaction=True)
def test_tasks_enqueued_on_commit_never_run_after_a_rollback(monkeypatch) -> None:
    calls: list[tuple] = []
    monkeypatch.setattr(ping, "delay", lambda *args, **kwargs: calls.append(args))

    class Rollback(Exception):
        pass

    def enqueue_then_fail() -> None:
        with transaction.atomic():
            ping.delay_on_commit("lost")
            raise Rollback

    with pytest.raises(Rollback):
        enqueue_then_fail()
    with transaction.atomic():
        ping.delay_on_commit("kept")
    assert calls == [("kept",)]


def test_task_defaults_are_json_late_acks_and_redelivery() -> None:
    from memoryhub.celery import app

    assert app.conf.task_serializer == "json"
    assert app.conf.accept_content == ["json"]
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True


@pytest.fixture
def worker(redis_url: str) -> Iterator[tuple[str, str]]:
    """A real `celery worker` process on Redis, consuming a queue of its own."""
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "CELERY_BROKER_URL": redis_url,
        "CELERY_RESULT_BACKEND": redis_url,
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memoryhub",
            "worker",
            "--pool=solo",
            "--queues",
            queue,
            "--without-gossip",
            "--without-mingle",
            "--loglevel=WARNING",
        ],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield redis_url, queue
    finally:
        stop_process(process)


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.redis
def test_a_task_round_trips_through_redis_and_a_worker_process(worker: tuple[str, str]) -> None:
    redis_url, queue = worker
    client = Celery(broker=redis_url, backend=redis_url)
    client.conf.update(task_serializer="json", accept_content=["json"], result_serializer="json")
    result = client.send_task("memoryhub.ping", args=["over redis"], queue=queue)
    answer = result.get(timeout=60)
    assert answer["pong"] == "over redis"
    assert answer["worker_pid"] != str(os.getpid())
