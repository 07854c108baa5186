"""With backups: a restore's replayed erasure emits subject.erased again, and the restored
outbox drops its undelivered events about the subject erased since the backup."""

from __future__ import annotations

import pytest

from apps.audit.actors import Actor
from apps.backups.services import erasures_reapply
from apps.memories.models import Subject
from apps.memories.row_encryption import KeyCache
from apps.memories.services import NewMemory, memory_create
from apps.webhooks.delivery import deliver_due
from apps.webhooks.models import WebhookDelivery
from memoryhub import erasure_ledger
from tests.conftest import Tenant
from tests.webhooks.conftest import Receiver, hook_for

pytestmark = pytest.mark.django_db
ACTOR = Actor.system("tests")


def test_a_replayed_erasure_emits_subject_erased_and_drops_the_subject_s_events(
    acme: Tenant, receiver: Receiver
) -> None:
    hook = hook_for(acme, receiver.url, ["memory.created", "subject.erased"])
    for subject in ("u1", "u2"):
        memory_create(
            actor=ACTOR,
            namespace=acme.namespace,
            item=NewMemory(subject_external_id=subject, content="Likes tea"),
        )
    assert WebhookDelivery.objects.filter(status="pending").count() == 2  # not yet sent
    # As in a backup older than u1's erasure: the ledger says u1 went, its rows are back.
    start = erasure_ledger.head()
    erasure_ledger.append(
        namespace_id=acme.namespace.pk,
        scope="subject",
        subject=KeyCache().subject_fingerprint(acme.namespace.pk, "u1"),
        receipt="r",
    )
    replay = erasures_reapply(actor=ACTOR, after=start)
    assert (replay.replayed, replay.webhook_deliveries_dropped) == (1, 1)
    assert not Subject.objects.filter(namespace=acme.namespace, external_id="u1").exists()
    while deliver_due():
        pass
    payloads = receiver.verified(hook.secret)
    assert sorted(p["type"] for p in payloads) == ["memory.created", "subject.erased"]
    u2 = Subject.objects.get(namespace=acme.namespace, external_id="u2")
    created = next(p for p in payloads if p["type"] == "memory.created")
    assert created["data"]["subject_id"] == str(u2.pk)  # u1's undelivered event was dropped
