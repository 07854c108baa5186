"""Webhook deliveries on a worker. Tasks take ids, call the delivery service, and are
idempotent: a delivery is claimed before it is sent, so a duplicate task does nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.webhooks.delivery import deliveries_due, deliveries_forget_settled, delivery_attempt

if TYPE_CHECKING:
    from celery import Task

# A retry this soon is queued with a countdown; later ones wait for the sweep.
COUNTDOWN_LIMIT = 300.0


@shared_task(
    name="webhooks.deliver",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def deliver(self: Task[[str], None], delivery_id: str) -> None:
    """Send one delivery if it is due. A worker killed mid-send: the message comes back
    (late ack), finds the delivery still claimed, and waits for the claim to expire. A
    failed send is queued again for its next try when that is soon; the sweep sends the
    later ones."""
    outcome = delivery_attempt(delivery_id=delivery_id)
    now = timezone.now()
    if not outcome.sent and outcome.claimed_elsewhere_until is not None:
        wait = (outcome.claimed_elsewhere_until - now).total_seconds() + 0.5
        if wait > 0:
            raise self.retry(countdown=wait)
    if outcome.sent and outcome.next_attempt_at is not None:
        wait = max((outcome.next_attempt_at - now).total_seconds(), 0.0)
        if wait <= COUNTDOWN_LIMIT:
            deliver.apply_async((delivery_id,), countdown=wait)


@shared_task(name="webhooks.sweep")
def sweep() -> int:
    """Queue every delivery due now (on beat, every MEMORYHUB_WEBHOOK_SWEEP_INTERVAL_SECONDS):
    retries, sends the broker lost, and deliveries a killed worker left claimed. Settled
    deliveries older than MEMORYHUB_WEBHOOK_LOG_DAYS are forgotten."""
    deliveries_forget_settled(older_than_days=settings.MEMORYHUB_WEBHOOK_LOG_DAYS)
    due = deliveries_due()
    for delivery_id in due:
        deliver.delay(delivery_id)
    return len(due)
