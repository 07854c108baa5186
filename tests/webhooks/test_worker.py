"""A real Celery worker delivers webhooks; one SIGKILLed mid-delivery loses nothing.

The receiver holds the first request open until the worker is killed, so the kill lands
while the POST is in flight (the delivery claimed, the attempt not recorded). A second worker
takes the task back and sends the delivery again, under the same `webhook-id`.

Settings the test lowers (defaults in parentheses):
- the task runs with `acks_late=True` and `reject_on_worker_lost=True` (as in production):
  the message is acknowledged only when the task ends, so a killed worker's task comes back;
- `MEMORYHUB_BROKER_VISIBILITY_TIMEOUT` 3 s (3600 s) and kombu's unacked restore every
  second (tests/pipeline/test_worker.py's WORKER): when Redis gives the killed worker's
  message to another worker;
- `MEMORYHUB_WEBHOOK_CLAIM_SECONDS` 3 s (60 s): how long the killed attempt's claim keeps
  the delivery from being sent again (the task that finds it claimed waits that out);
- `MEMORYHUB_WEBHOOK_SWEEP_INTERVAL_SECONDS` is not needed here (no beat runs): the
  redelivered message does it; the sweep is the backstop when a message itself is lost.
"""

from __future__ import annotations

import signal
from typing import Any

import pytest

from apps.webhooks.models import WebhookDelivery
from tests.conftest import Tenant, stop_process
from tests.pipeline.test_worker import broker, start_worker, wait_for  # noqa: F401 (fixture)
from tests.webhooks.conftest import Receiver, hook_for

WORKER_ENV = {
    "MEMORYHUB_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    "MEMORYHUB_WEBHOOK_CLAIM_SECONDS": "3",
    "MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS": "30",
    "MEMORYHUB_WEBHOOK_RETRY_SCHEDULE": "1,1,1",
}


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_delivery_still_delivers_under_one_webhook_id(
    acme: Tenant,
    receiver: Receiver,
    broker: tuple[str, str],  # noqa: F811 (the fixture, imported)
    settings: Any,
) -> None:
    redis_url, queue = broker
    hook = hook_for(acme, receiver.url, ["memory.created"])
    receiver.hold.clear()  # the first request waits, unanswered
    first = start_worker(redis_url, queue, env=WORKER_ENV)
    second = None
    try:
        created = acme.client.post(
            acme.url("memories"), {"subject": "u1", "content": "Likes tea"}, format="json"
        )
        assert created.status_code == 201
        wait_for(lambda: len(receiver.started) == 1, timeout=60)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)
        receiver.hold.set()  # from now on every request is answered
        delivery = WebhookDelivery.objects.get()
        assert delivery.status == "pending"
        assert delivery.claimed_until is not None

        second = start_worker(redis_url, queue, env=WORKER_ENV)
        wait_for(lambda: WebhookDelivery.objects.get().status == "delivered", timeout=120)
        assert len(receiver.started) >= 2  # the killed attempt's request, and the one after
        ids = {arrival.headers["webhook-id"] for arrival in receiver.started}
        assert ids == {f"msg_{delivery.pk.hex}"}
        payloads = receiver.verified(hook.secret)
        assert {p["type"] for p in payloads} == {"memory.created"}
    finally:
        receiver.hold.set()
        stop_process(first)
        if second is not None:
            stop_process(second)
