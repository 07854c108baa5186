"""The audit viewer's labels: what an event's object and subject are called, resolved when the
page renders (one query per kind of object, not per row), never written to the log; the
external ids for owners and editors only; an erased subject by its receipt's fingerprint."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.audit.models import AuditEvent
from apps.dashboard.audit.labels import audit_event_labels
from apps.memories.models import Kind, Subject
from apps.memories.services.memories import NewMemory, memory_create
from apps.memories.services.subjects import subject_erase
from apps.namespaces.selectors import audit_scope_for
from tests.dashboard.audit.conftest import ACTOR, AuditCast


def _remember(cast: AuditCast, who: str, kind: str = Kind.SEMANTIC) -> AuditEvent:
    memory = memory_create(
        actor=ACTOR,
        namespace=cast.acme,
        item=NewMemory(content=f"{who} likes tea", subject_external_id=who, kind=kind),
    )
    return AuditEvent.objects.get(action="memory.create", object_id=str(memory.pk))


def test_it_names_a_memory_by_its_kind_and_whose_it_is(cast: AuditCast) -> None:
    event = _remember(cast, "demo-user-1")
    label = audit_event_labels(events=[event], scope=audit_scope_for(cast.users["olive"]))
    found = label[event.pk]
    assert found.object is not None
    assert found.object.text == "semantic memory of demo-user-1"
    assert found.object.url == f"/n/acme/memories/{event.object_id}/"
    assert found.subject_apart is None  # the memory's label already says whose it is
    assert found.subject is not None
    assert found.subject.text == "subject demo-user-1"


def test_it_shows_an_editor_the_external_id_and_a_viewer_none(cast: AuditCast) -> None:
    event = _remember(cast, "demo-user-1", Kind.EPISODIC)
    editor = audit_event_labels(events=[event], scope=audit_scope_for(cast.users["eddie"]))
    viewer = audit_event_labels(events=[event], scope=audit_scope_for(cast.users["vera"]))
    assert editor[event.pk].object.text == "episodic memory of demo-user-1"  # type: ignore[union-attr]
    seen = viewer[event.pk]
    assert seen.object is not None
    assert seen.subject is not None
    assert seen.object.text == "episodic memory of a subject"
    assert seen.subject.text == "a subject"
    assert seen.object.url  # still linked to the memory's page
    assert "demo-user-1" not in f"{seen.object} {seen.subject}"


def test_it_names_an_erased_subject_by_its_receipts_fingerprint(cast: AuditCast) -> None:
    event = _remember(cast, "gone-user")
    subject = Subject.objects.get(external_id="gone-user")
    receipt = subject_erase(actor=ACTOR, subject=subject, via="dashboard")
    erasure = AuditEvent.objects.get(pk=receipt.audit_event_id)
    labels = audit_event_labels(events=[event, erasure], scope=audit_scope_for(cast.users["olive"]))
    memory = labels[event.pk]
    assert memory.object is not None
    assert memory.subject is not None
    assert memory.object.text == "semantic memory of an erased subject (deleted)"
    assert memory.object.url == ""
    assert memory.subject.text == "erased subject"
    assert memory.subject.fingerprint == receipt.subject_fingerprint
    erased = labels[erasure.pk].object
    assert erased is not None
    assert (erased.text, erased.fingerprint) == ("erased subject", receipt.subject_fingerprint)
    assert "gone-user" not in str(labels)


def test_it_resolves_a_page_in_one_query_per_kind_of_object(
    cast: AuditCast, django_assert_max_num_queries: object
) -> None:
    for n in range(3):
        _remember(cast, f"user-{n}")
    few = list(AuditEvent.objects.order_by("-id"))
    scope = audit_scope_for(cast.users["alice"])
    with CaptureQueriesContext(connection) as small:
        audit_event_labels(events=few, scope=scope)
    for n in range(3, 30):
        _remember(cast, f"user-{n}")
    subject = Subject.objects.get(external_id="user-0")
    subject_erase(actor=ACTOR, subject=subject, via="dashboard")
    many = list(AuditEvent.objects.order_by("-id"))
    assert len(many) > 3 * len(few)
    with django_assert_max_num_queries(4):  # type: ignore[operator]
        labels = audit_event_labels(events=many, scope=scope)
    assert len(small.captured_queries) <= 4
    assert {label.object.text for label in labels.values() if label.object} >= {
        "semantic memory of user-29",
        "erased subject",
    }


def test_it_writes_nothing_to_the_log(cast: AuditCast) -> None:
    event = _remember(cast, "demo-user-1")
    before = list(AuditEvent.objects.order_by("id").values_list("id", "hash", "details"))
    audit_event_labels(events=[event], scope=audit_scope_for(cast.users["olive"]))
    assert list(AuditEvent.objects.order_by("id").values_list("id", "hash", "details")) == before


@pytest.mark.parametrize(
    ("object_type", "object_id", "text", "url"),
    [
        ("api_key", "k3f2abcd", "API key k3f2abcd", "/api-keys/k3f2abcd/"),
        ("job", "0b5f7f3e-0000-4000-8000-000000000000", "job 0b5f7f3e…", ""),
        ("eval_run", "7", "eval_run 7", ""),
    ],
)
def test_it_names_other_objects_by_kind(
    cast: AuditCast, object_type: str, object_id: str, text: str, url: str
) -> None:
    from apps.audit.services import audit_record

    event = audit_record(
        actor=ACTOR, action="test.other", namespace=cast.acme, object_type=object_type,
        object_id=object_id,
    )  # fmt: skip
    label = audit_event_labels(events=[event], scope=audit_scope_for(cast.users["olive"]))
    found = label[event.pk].object
    assert found is not None
    assert (found.text, found.url) == (text, url)


def test_it_names_a_user_by_their_username(cast: AuditCast) -> None:
    from apps.audit.services import audit_record

    event = audit_record(
        actor=ACTOR, action="test.user", namespace=cast.acme, object_type="user",
        object_id=str(cast.users["vera"].pk),
    )  # fmt: skip
    found = audit_event_labels(events=[event], scope=audit_scope_for(cast.users["olive"]))
    assert found[event.pk].object.text == "user vera"  # type: ignore[union-attr]
