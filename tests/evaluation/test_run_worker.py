"""A run on a real Celery worker (Redis): killed part-way, its task comes back to the next
worker, which asks only the cases left."""

from __future__ import annotations

import json
import signal

import pytest

from apps.audit.actors import Actor
from apps.evaluation.models import CaseResult, EvalRun, RunStatus
from apps.evaluation.services import eval_set_import_jsonl, run_start
from tests.conftest import Tenant, stop_process
from tests.pipeline.test_worker import (  # noqa: F401
    blocker_connection,
    broker,
    start_worker,
    wait_for,
    waits_on_a_lock,
)

ACTOR = Actor.system("tests")
CASES = 40
STOPPED_AT = 3  # cases committed before the worker is killed


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_s_run_is_finished_by_the_next_without_repeats(
    acme: Tenant,
    broker: tuple[str, str],  # noqa: F811
) -> None:
    redis_url, queue = broker
    text = "\n".join(json.dumps({"question": f"question number {i}?"}) for i in range(CASES))
    eval_set = eval_set_import_jsonl(actor=ACTOR, namespace=acme.namespace, name="s", text=text)
    # Hold one case's row before the run starts: the commit of that case's result (its
    # reference to the case, checked at commit) waits on it, however fast the worker is,
    # after the cases before it have committed. The worker is killed there, and its database
    # session with it (a session already committing would otherwise finish once unblocked).
    stopper = eval_set.cases.order_by("position")[STOPPED_AT]
    blocker = blocker_connection()
    blocker.execute("SELECT 1 FROM evaluation_evalcase WHERE id = %s FOR UPDATE", [stopper.pk])
    first = start_worker(redis_url, queue)
    second = None
    try:
        run = run_start(actor=ACTOR, eval_set=eval_set)
        wait_for(lambda: waits_on_a_lock(blocker), timeout=120)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)
        blocker.execute(
            "SELECT pg_terminate_backend(pid, 20000) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        blocker.rollback()
        stopped = EvalRun.objects.get(pk=run.pk)
        assert stopped.status == RunStatus.RUNNING
        assert stopped.done == STOPPED_AT
        assert CaseResult.objects.filter(run=run).count() == STOPPED_AT

        second = start_worker(redis_url, queue)  # the unacknowledged task comes back to it
        wait_for(lambda: EvalRun.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED, timeout=180)
        finished = EvalRun.objects.get(pk=run.pk)
        assert finished.done == CASES
        assert finished.attempts == 2
        assert CaseResult.objects.filter(run=run).count() == CASES
        assert finished.metrics["unanswerable"] == CASES
    finally:
        blocker.close()
        stop_process(first)
        if second is not None:
            stop_process(second)
