"""Without a broker (the embedded default) a thread of the web process delivers, and retries,
with no other process: started by the first event after its commit."""

from __future__ import annotations

import time
from typing import Any

import pytest

from apps.webhooks.models import WebhookDelivery
from tests.conftest import Tenant
from tests.webhooks.conftest import Receiver, hook_for


def wait_for(condition: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_the_dispatcher_thread_delivers_and_retries_without_a_broker(
    acme: Tenant, receiver: Receiver, settings: Any
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.MEMORYHUB_WEBHOOK_DISPATCHER = True
    settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = [0.5, 0.5]
    hook = hook_for(acme, receiver.url, ["memory.created"])
    receiver.status = 503  # down at first
    created = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "Likes tea"}, format="json"
    )
    assert created.status_code == 201
    wait_for(lambda: len(receiver.arrivals) == 1)
    receiver.status = 200  # back: the thread's retry, half a second later, gets through
    wait_for(lambda: WebhookDelivery.objects.get().status == "delivered")
    assert len(receiver.verified(hook.secret)) == 2
    assert [t.status_code for t in WebhookDelivery.objects.get().tries.order_by("id")] == [
        503,
        200,
    ]
