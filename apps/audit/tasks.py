"""The audit chain's verification on a worker: hourly on beat (settings'
CELERY_BEAT_SCHEDULE["audit-chain-verify"]) and for "verify now". Tasks take ids and call
the services; without a broker the work runs in this process after the commit."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import OperationalError

from apps.audit.actors import Actor
from apps.audit.models import ChainVerification
from apps.audit.services import (
    chain_verification_execute,
    chain_verification_fail,
    chain_verification_start,
)
from memoryhub.tasks import after_commit


@shared_task(bind=True, name="audit.chain_verify", max_retries=5)
def chain_verify(task: Any, verification_id: int | None = None, full: bool = False) -> int | None:
    """Walk the chain: the given running verification, or (beat) a new one. A lost database
    connection retries the same verification with backoff; after the last retry it is marked
    as unable to finish. Idempotent: a finished or missing verification is left alone."""
    if verification_id is None:
        verification_id = chain_verification_start(requested_by="beat", full=full).pk
    try:
        verification = chain_verification_execute(verification_id=verification_id)
    except OperationalError as error:
        if task.request.retries >= task.max_retries:
            chain_verification_fail(verification_id=verification_id, reason=type(error).__name__)
            raise
        raise task.retry(
            exc=error,
            kwargs={"verification_id": verification_id, "full": full},
            countdown=min(10 * 2**task.request.retries, 600),
        ) from error
    return verification.pk if verification else None


def chain_verification_enqueue(verification_id: int) -> None:
    """Walk the verification after the enclosing transaction commits: on a worker, or
    without a broker in this process. If the broker cannot take it, it is marked as unable
    to finish (a running row that nothing runs would poll for ever)."""
    after_commit(
        chain_verify,
        verification_id,
        inline=lambda: chain_verification_execute(verification_id=verification_id),
        what=f"chain verification {verification_id}",
        refused=lambda: chain_verification_fail(
            verification_id=verification_id, reason="the task queue is down"
        ),
    )


def chain_verification_request(*, actor: Actor, full: bool) -> ChainVerification:
    """ "Verify now": a running verification, walked after the commit (on a worker, or in
    this process without a broker). Audited as `audit.chain_verify`."""
    verification = chain_verification_start(
        requested_by=f"user:{actor.name}", actor=actor, full=full
    )
    chain_verification_enqueue(verification.pk)
    return verification
