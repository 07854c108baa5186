"""Every event type reaches a real receiver, signed, content-free by default; an erasure in
the privacy portal produces subject.erased."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.models import ChainVerification
from apps.audit.services import _audit_broken, audit_record
from apps.memories.models import Memory, Subject
from apps.memories.services import (
    NewMemory,
    memory_approve,
    memory_create,
    memory_delete,
    memory_end,
    memory_update,
    subject_erase,
)
from apps.memories.services.subjects import subject_export
from apps.pipeline.lifecycle import expire
from apps.webhooks.catalog import EVENT_TYPES
from apps.webhooks.delivery import deliver_due
from apps.webhooks.models import WebhookDelivery, WebhookEvent
from tests.conftest import Tenant
from tests.webhooks.conftest import Receiver, hook_for

pytestmark = pytest.mark.django_db
ACTOR = Actor.system("tests")
# The fields docs/webhooks.md documents for each type (content and subject aside).
DOCUMENTED = {
    "memory.created": {"memory_id", "subject_id", "kind", "status", "version", "created_at"},
    "memory.updated": {"memory_id", "subject_id", "kind", "status", "version", "updated_at"},
    "memory.superseded": {"memory_id", "superseded_by", "subject_id", "kind", "valid_to"},
    "memory.ended": {"memory_id", "subject_id", "kind", "valid_to"},
    "memory.disputed": {"memory_id", "disputed_by", "subject_id", "kind", "disputed_at"},
    "memory.deleted": {"memory_id", "subject_id", "kind", "deleted_at"},
    "subject.erased": {
        "subject_id", "subject_fingerprint", "memories_deleted", "versions_deleted",
        "erased_at", "receipt_hash", "via",
    },
    "subject.exported": {"subject_id", "memories", "exported_at", "via"},
    "review.resolved": {"memory_id", "subject_id", "resolution", "merged_into", "resolved_at"},
    "purge.completed": {"job_id", "memories_deleted", "started_at", "completed_at"},
    "retention.applied": {"memories_archived", "memories_expired", "subjects", "applied_at"},
    "audit.verification_failed": {
        "verification_id", "event_id", "reason", "checked", "verified_at",
    },
}  # fmt: skip


def remember(tenant: Tenant, text: str, subject: str = "u1", **fields: Any) -> Memory:
    return memory_create(
        actor=ACTOR,
        namespace=tenant.namespace,
        item=NewMemory(subject_external_id=subject, content=text, **fields),
    )


def _memory_audit(tenant: Tenant, action: str, memory: Memory, details: dict[str, Any]) -> None:
    """Actions of the write pipeline (a contradiction's dispute, a supersession), as its
    services audit them."""
    audit_record(
        actor=ACTOR,
        action=action,
        namespace=tenant.namespace,
        subject_id=memory.subject_id,
        object_type="memory",
        object_id=str(memory.pk),
        details=details,
    )


def every_change(tenant: Tenant) -> None:
    """One change of each kind the events report."""
    first = remember(tenant, "Lives in Hangzhou")
    second = remember(tenant, "Lives in Shanghai")
    memory_update(actor=ACTOR, memory=second, content="Lives in Shanghai, Pudong")
    _memory_audit(tenant, "memory.supersede", first, {"successor": str(second.pk)})
    _memory_audit(tenant, "memory.dispute", second, {"by_message": "msg-7"})
    memory_approve(actor=ACTOR, memory=second)
    memory_end(actor=ACTOR, memory=Memory.objects.get(pk=second.pk))
    memory_delete(actor=ACTOR, memory=Memory.objects.get(pk=first.pk))
    remember(tenant, "Short-lived", expires_at=timezone.now() + timedelta(milliseconds=1))
    Memory.objects.filter(namespace=tenant.namespace).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    expire(actor=ACTOR, namespace=tenant.namespace)
    audit_record(
        actor=ACTOR,
        action="memory.purge",
        namespace=tenant.namespace,
        object_type="job",
        object_id="j1",
        details={"memories": 2, "versions": 0, "recall_log_rows": 0, "reason": "free text"},
    )
    remember(tenant, "Erase me", subject="u2")
    subject = Subject.objects.get(namespace=tenant.namespace, external_id="u2")
    subject_export(actor=ACTOR, subject=subject)
    subject_erase(actor=ACTOR, subject=subject, via="api")
    verification = ChainVerification.objects.create(
        started_at=timezone.now(),
        status="broken",
        requested_by="beat",
        broken_chain=tenant.namespace.pk,
    )
    _audit_broken(verification)


def test_every_event_type_is_delivered_signed_and_without_content(
    acme: Tenant, receiver: Receiver
) -> None:
    hook = hook_for(acme, receiver.url)
    every_change(acme)
    while deliver_due():
        pass
    payloads = receiver.verified(hook.secret)
    assert set(EVENT_TYPES) <= {p["type"] for p in payloads}
    body = b"".join(a.body for a in receiver.arrivals).decode()
    for text in ("Hangzhou", "Shanghai", "Short-lived", "Erase me", "free text", '"u2"'):
        assert text not in body
    erased = next(p for p in payloads if p["type"] == "subject.erased")
    assert len(erased["data"]["subject_fingerprint"]) >= 32
    assert "subject" not in erased["data"]
    assert {p["data"]["namespace"] for p in payloads} == {"acme"}
    for payload in payloads:
        missing = DOCUMENTED[payload["type"]] - set(payload["data"])
        assert not missing, (payload["type"], missing)
    created = next(p["data"] for p in payloads if p["type"] == "memory.created")
    assert (created["kind"], created["status"], created["version"]) == ("semantic", "active", 1)
    disputed = next(p["data"] for p in payloads if p["type"] == "memory.disputed")
    assert disputed["disputed_by"] == "msg-7"  # the turn's message id
    assert erased["data"]["via"] == "api"
    deleted = next(p["data"] for p in payloads if p["type"] == "memory.deleted")
    assert deleted["kind"] == "semantic"
    resolutions = {p["data"]["resolution"] for p in payloads if p["type"] == "review.resolved"}
    assert resolutions == {"approved", "rejected"}
    retention = next(p["data"] for p in payloads if p["type"] == "retention.applied")
    assert retention["memories_expired"] >= 1
    assert all(set(p) == {"type", "timestamp", "data"} for p in payloads)
    ids = [a.headers["webhook-id"] for a in receiver.arrivals]
    assert len(ids) == len(set(ids)) == WebhookDelivery.objects.count()


def test_a_new_memory_s_event_and_deliveries_are_one_statement_of_its_write(
    acme: Tenant, receiver: Receiver
) -> None:
    """The write-rate cost: the outbox rows of memory.created are a single INSERT (the
    endpoints chosen inside it, the memory's fields from the object the writer holds)."""
    remember(acme, "Warm-up: the subject exists")

    def statements(text: str) -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            remember(acme, text)
        return [q["sql"] for q in captured.captured_queries]

    without = statements("Likes green tea")
    hook_for(acme, receiver.url, ["memory.created"])
    hook_for(acme, receiver.url, ["memory.created", "memory.deleted"])
    hook_for(acme, receiver.url, ["memory.deleted"])
    with_endpoints = statements("Likes black tea")
    black_tea = Memory.objects.latest("created_at")
    extra = len(with_endpoints) - len(without)
    assert extra == 1, with_endpoints
    assert WebhookDelivery.objects.count() == 2  # the two subscribed endpoints
    (event,) = WebhookEvent.objects.all()
    assert event.type == "memory.created"
    assert event.data["version"] == 1
    assert event.data["memory_id"] == str(black_tea.pk)
    assert event.data["created_at"] == black_tea.created_at.isoformat()  # the memory's own time


def test_correcting_a_disputed_fact_is_a_review_resolved_as_edited(
    acme: Tenant, receiver: Receiver
) -> None:
    hook = hook_for(acme, receiver.url, ["memory.updated", "review.resolved"])
    fact = remember(acme, "Allergic to penicillin")
    Memory.objects.filter(pk=fact.pk).update(status="disputed")
    memory_update(actor=ACTOR, memory=fact, content="Allergic to amoxicillin")
    memory_update(actor=ACTOR, memory=fact, content="Allergic to amoxicillin, mildly")
    while deliver_due():
        pass
    types = [p["type"] for p in receiver.verified(hook.secret)]
    assert sorted(types) == ["memory.updated", "memory.updated", "review.resolved"]
    (resolved,) = [
        p["data"] for p in receiver.verified(hook.secret) if p["type"] == "review.resolved"
    ]
    assert (resolved["resolution"], resolved["memory_id"]) == ("edited", str(fact.pk))


def test_another_namespace_s_events_do_not_reach_an_endpoint(
    acme: Tenant, globex: Tenant, receiver: Receiver
) -> None:
    hook_for(acme, receiver.url)
    remember(globex, "Globex's fact")
    assert deliver_due() == 0


def test_an_include_content_endpoint_gets_the_erased_subject_s_id_once(
    acme: Tenant, receiver: Receiver
) -> None:
    plain = hook_for(acme, receiver.url, ["subject.erased"])
    content = hook_for(acme, receiver.url, ["subject.erased"], include_content=True)
    remember(acme, "Erase me", subject="person-42")
    subject = Subject.objects.get(namespace=acme.namespace, external_id="person-42")
    subject_erase(actor=ACTOR, subject=subject, via="api")
    # Only the include_content endpoint's delivery holds it, and only sealed.
    sealed = WebhookDelivery.objects.get(endpoint=content.endpoint)
    assert sealed.subject_encrypted
    assert b"person-42" not in bytes(sealed.subject_encrypted)
    assert WebhookDelivery.objects.get(endpoint=plain.endpoint).subject_encrypted is None
    deliver_due()
    by_endpoint = {a.headers["webhook-id"]: a.payload["data"] for a in receiver.arrivals}
    assert by_endpoint[f"msg_{sealed.pk.hex}"]["subject"] == "person-42"
    others = [d for key, d in by_endpoint.items() if key != f"msg_{sealed.pk.hex}"]
    assert [("subject" in d) for d in others] == [False]
    sealed.refresh_from_db()
    assert sealed.subject_encrypted is None  # forgotten once delivered


def test_an_erasure_in_the_portal_reaches_the_receiver(acme: Tenant, receiver: Receiver) -> None:
    hook = hook_for(acme, receiver.url, ["subject.erased"])
    remember(acme, "Likes tea", subject="u1")
    link = acme.client.post(acme.url("subjects/u1/portal-sessions"), {}, format="json").json()
    person = Client()
    assert person.get(link["url"]).status_code == 303
    subject = Subject.objects.get(namespace=acme.namespace, external_id="u1")
    answer = person.post(f"/portal/{subject.pk}/erase/", {"confirmation": "Erase everything"})
    assert answer.status_code == 200
    assert deliver_due() == 1
    (payload,) = receiver.verified(hook.secret)
    assert payload["type"] == "subject.erased"
    assert payload["data"]["memories_deleted"] == 1
    assert "u1" not in receiver.arrivals[0].body.decode().replace('"u1', "")


def test_each_memory_the_write_pipeline_stores_is_a_memory_created(
    acme: Tenant, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    from apps.pipeline.ingestion import IncomingMessage, messages_ingest

    hook = hook_for(acme, receiver.url, ["memory.created"])
    with django_capture_on_commit_callbacks(execute=True):
        messages_ingest(
            actor=ACTOR,
            namespace=acme.namespace,
            subject_external_id="u1",
            session_external_id="s1",
            messages=[IncomingMessage("user", "I live in Hangzhou and I love green tea.")],
        )
    stored = set(Memory.objects.filter(namespace=acme.namespace).values_list("pk", flat=True))
    assert stored
    while deliver_due():
        pass
    payloads = receiver.verified(hook.secret)
    assert sorted(p["data"]["memory_id"] for p in payloads) == sorted(str(pk) for pk in stored)
    assert all(p["data"]["job_id"] and p["data"]["kind"] for p in payloads)
    assert "Hangzhou" not in b"".join(a.body for a in receiver.arrivals).decode()
