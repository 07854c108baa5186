"""Delivery to a real receiver on loopback: signed per Standard Webhooks, retried, logged."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.services import NewMemory, memory_create
from apps.webhooks import services
from apps.webhooks.delivery import deliver_due
from apps.webhooks.models import DeliveryStatus, WebhookAttempt, WebhookDelivery, WebhookEvent
from tests.conftest import Tenant
from tests.webhooks.conftest import Receiver, hook_for

pytestmark = pytest.mark.django_db


def remember(tenant: Tenant, text: str = "Likes green tea", subject: str = "u1") -> Any:
    return memory_create(
        actor=Actor.system("tests"),
        namespace=tenant.namespace,
        item=NewMemory(subject_external_id=subject, content=text),
    )


def test_it_writes_no_outbox_row_without_an_endpoint(acme: Tenant) -> None:
    remember(acme)
    assert WebhookEvent.objects.count() == 0
    assert WebhookDelivery.objects.count() == 0


def test_it_delivers_a_signed_event_without_content(acme: Tenant, receiver: Receiver) -> None:
    hook = hook_for(acme, receiver.url, ["memory.created"])
    memory = remember(acme, "Likes green tea")
    assert deliver_due() == 1
    (payload,) = receiver.verified(hook.secret)
    assert payload["type"] == "memory.created"
    assert payload["data"]["memory_id"] == str(memory.pk)
    assert payload["data"]["namespace"] == "acme"
    assert "green tea" not in receiver.arrivals[0].body.decode()
    delivery = WebhookDelivery.objects.get()
    assert receiver.arrivals[0].headers["webhook-id"] == f"msg_{delivery.pk.hex}"
    assert delivery.status == DeliveryStatus.DELIVERED
    attempt = WebhookAttempt.objects.get()
    assert (attempt.status_code, bytes(attempt.response_body)) == (200, b"ok " * 10)


def test_an_include_content_endpoint_gets_the_text_and_each_send_is_audited(
    acme: Tenant, receiver: Receiver
) -> None:
    hook = hook_for(acme, receiver.url, ["memory.created"], include_content=True)
    memory = remember(acme, "Likes green tea")
    deliver_due()
    (payload,) = receiver.verified(hook.secret)
    assert payload["data"]["content"] == "Likes green tea"
    sent = AuditEvent.objects.get(action="webhook.content_sent")
    assert sent.object_id == str(memory.pk)
    assert "green tea" not in str(sent.details)


def test_an_endpoint_only_gets_the_events_it_subscribed_to(
    acme: Tenant, receiver: Receiver
) -> None:
    hook_for(acme, receiver.url, ["subject.erased"])
    remember(acme)
    assert deliver_due() == 0
    assert WebhookEvent.objects.count() == 0


def test_the_receiver_down_then_back_gets_every_event(
    acme: Tenant, receiver: Receiver, settings: Any
) -> None:
    settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = [0.0] * 5
    hook = hook_for(acme, receiver.url, ["memory.created"])
    port = receiver.port
    receiver.stop()
    for number in range(3):
        remember(acme, f"fact {number}")
    assert deliver_due() == 3  # connection refused, each
    assert deliver_due() == 3
    receiver.port = port
    receiver.start()
    assert deliver_due() == 3
    assert len(receiver.verified(hook.secret)) == 3
    for delivery in WebhookDelivery.objects.all():
        assert delivery.status == DeliveryStatus.DELIVERED
        errors = [t.error for t in delivery.tries.order_by("id")]
        assert errors == ["connection", "connection", ""]


def test_a_slow_receiver_times_out_then_a_retry_gets_through(
    acme: Tenant, receiver: Receiver, settings: Any
) -> None:
    settings.MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS = 0.3
    hook = hook_for(acme, receiver.url, ["memory.created"])
    remember(acme)
    receiver.delay = 1.0
    deliver_due()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.tries.get().error == "timeout"
    receiver.delay = 0.0
    deliver_due()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    # The slow answer arrived too: at least once, under one webhook-id.
    ids = {a.headers["webhook-id"] for a in receiver.arrivals}
    assert ids == {f"msg_{delivery.pk.hex}"}
    receiver.verified(hook.secret)


def test_retries_follow_the_schedule_then_the_endpoint_is_failing(
    acme: Tenant, receiver: Receiver, settings: Any
) -> None:
    settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = [0.0, 3600.0]
    hook = hook_for(acme, receiver.url, ["memory.created"])
    receiver.status = 500
    remember(acme)
    assert deliver_due() == 1
    assert deliver_due() == 1  # the first retry, at once
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.next_attempt_at > timezone.now() + timedelta(seconds=3500)
    assert deliver_due() == 0  # not due for an hour
    WebhookDelivery.objects.update(next_attempt_at=timezone.now())
    assert deliver_due() == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("failed", 3, 500)
    hook.endpoint.refresh_from_db()
    assert hook.endpoint.failing_since is not None
    assert AuditEvent.objects.filter(action="webhook.failing").count() == 1
    # A later success clears it.
    receiver.status = 204
    services.delivery_redeliver(actor=Actor.system("tests"), delivery=delivery)
    assert deliver_due() == 1
    hook.endpoint.refresh_from_db()
    assert hook.endpoint.failing_since is None
    assert AuditEvent.objects.filter(action="webhook.recovered").count() == 1
    ids = {a.headers["webhook-id"] for a in receiver.arrivals}
    assert len(ids) == 1  # every try and the redelivery: one idempotency key


def test_a_rotated_secret_signs_beside_the_old_one_during_the_overlap(
    acme: Tenant, receiver: Receiver
) -> None:
    hook = hook_for(acme, receiver.url, ["memory.created"])
    new = services.endpoint_rotate_secret(actor=Actor.system("tests"), endpoint=hook.endpoint)
    assert new != hook.secret
    assert new.startswith("whsec_")
    remember(acme)
    deliver_due()
    arrival = receiver.arrivals[-1]
    assert len(arrival.headers["webhook-signature"].split(" ")) == 2
    Webhook(hook.secret).verify(arrival.body, arrival.headers)
    Webhook(new).verify(arrival.body, arrival.headers)
    # After the overlap only the new secret signs.
    hook.endpoint.refresh_from_db()
    hook.endpoint.previous_secret_until = timezone.now() - timedelta(seconds=1)
    hook.endpoint.save(update_fields=["previous_secret_until"])
    remember(acme, "another")
    deliver_due()
    arrival = receiver.arrivals[-1]
    assert len(arrival.headers["webhook-signature"].split(" ")) == 1
    Webhook(new).verify(arrival.body, arrival.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(hook.secret).verify(arrival.body, arrival.headers)
    assert AuditEvent.objects.filter(action="webhook.rotate_secret").count() == 1


def test_two_claims_never_send_one_delivery_at_once(acme: Tenant, receiver: Receiver) -> None:
    from apps.webhooks.delivery import delivery_attempt

    hook_for(acme, receiver.url, ["memory.created"])
    remember(acme)
    delivery = WebhookDelivery.objects.get()
    WebhookDelivery.objects.update(claimed_until=timezone.now() + timedelta(seconds=60))
    outcome = delivery_attempt(delivery_id=str(delivery.pk))
    assert not outcome.sent
    assert outcome.claimed_elsewhere_until is not None
    assert receiver.arrivals == []
    # A claim that expired (its worker died) is taken over.
    WebhookDelivery.objects.update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert delivery_attempt(delivery_id=str(delivery.pk)).delivered


def test_every_failed_delivery_since_a_time_is_sent_again(
    acme: Tenant, receiver: Receiver, settings: Any
) -> None:
    settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = []
    hook = hook_for(acme, receiver.url, ["memory.created"])
    receiver.status = 500
    remember(acme, "one")
    remember(acme, "two")
    assert deliver_due() == 2
    assert WebhookDelivery.objects.filter(status=DeliveryStatus.FAILED).count() == 2
    receiver.status = 200
    count = services.deliveries_redeliver_failed(
        actor=Actor.system("tests"),
        endpoint=hook.endpoint,
        since=timezone.now() - timedelta(hours=1),
    )
    assert count == 2
    assert deliver_due() == 2
    assert WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).count() == 2
    event = AuditEvent.objects.filter(action="webhook.redeliver").get()
    assert event.details["count"] == 2


def test_the_sweep_sends_what_is_due_and_forgets_old_settled_deliveries(
    acme: Tenant, receiver: Receiver, settings: Any
) -> None:
    from apps.webhooks.tasks import sweep

    settings.CELERY_TASK_ALWAYS_EAGER = True  # the sweep's tasks run here
    settings.MEMORYHUB_WEBHOOK_LOG_DAYS = 30
    hook_for(acme, receiver.url, ["memory.created"])
    remember(acme, "old")
    remember(acme, "new")
    assert sweep() == 2
    assert len(receiver.arrivals) == 2
    old = WebhookDelivery.objects.order_by("created_at").first()
    WebhookDelivery.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=31))
    WebhookEvent.objects.filter(pk=old.event_id).update(
        created_at=timezone.now() - timedelta(days=31)
    )
    assert sweep() == 0
    assert not WebhookDelivery.objects.filter(pk=old.pk).exists()
    assert WebhookDelivery.objects.count() == 1
    assert WebhookEvent.objects.count() == 1
    assert WebhookAttempt.objects.count() == 1
