"""POST /api/v1/namespaces/{ns}/recall/{recall_id}/feedback: an app says whether a served
memory was relevant. Scoped to the namespace (another's recall is not found), only for what
that recall served, the note encrypted at rest, audited without it, erased with the subject."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.audit.models import AuditEvent
from apps.memories.models import Subject
from apps.recall.models import RecallFeedback
from tests.conftest import api_client, make_api_key

pytestmark = pytest.mark.django_db

CANARY = "zebra-canary-7731 was the wrong memory"


def remembered_and_recalled(tenant) -> tuple[str, str]:
    created = tenant.client.post(
        tenant.url("memories"),
        {"subject": "u1", "content": "Prefers window seats on long flights"},
        format="json",
    )
    assert created.status_code == 201
    recalled = tenant.client.post(
        tenant.url("recall"), {"subject": "u1", "query": "window seat"}, format="json"
    ).json()
    return recalled["recall_id"], recalled["results"][0]["memory"]["id"]


def feedback(tenant, recall_id, body, client=None):
    client = client or tenant.client
    return client.post(tenant.url(f"recall/{recall_id}/feedback"), body, format="json")


def test_feedback_is_stored_for_a_served_memory_and_given_again_replaces_it(acme) -> None:
    recall_id, memory_id = remembered_and_recalled(acme)
    first = feedback(acme, recall_id, {"memory_id": memory_id, "relevant": True})
    assert first.status_code == 201, first.json()
    assert first.json()["relevant"] is True
    assert first.json()["recall_id"] == recall_id
    again = feedback(acme, recall_id, {"memory_id": memory_id, "relevant": False, "note": "old"})
    assert again.status_code == 201
    assert again.json()["id"] == first.json()["id"]
    (stored,) = RecallFeedback.objects.all()
    assert stored.relevant is False
    assert stored.subject == Subject.objects.get(external_id="u1")
    events = AuditEvent.objects.filter(action="recall.feedback").order_by("id")
    assert [e.details["relevant"] for e in events] == [True, False]
    assert events.last().details["note"] is True


def test_another_namespaces_recall_is_not_found(acme, globex) -> None:
    recall_id, memory_id = remembered_and_recalled(acme)
    response = feedback(globex, recall_id, {"memory_id": memory_id, "relevant": True})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert (
        feedback(acme, "not-a-uuid", {"memory_id": memory_id, "relevant": True}).status_code == 404
    )
    assert not RecallFeedback.objects.exists()


def test_only_a_memory_the_recall_served(acme) -> None:
    recall_id, _ = remembered_and_recalled(acme)
    other = acme.client.post(
        acme.url("memories"), {"subject": "u2", "content": "Keeps bees"}, format="json"
    ).json()["id"]
    for memory_id, code in ((other, 400), ("x", 400)):
        response = feedback(acme, recall_id, {"memory_id": memory_id, "relevant": True})
        assert response.status_code == code
        assert "memory_id" in response.json()["error"]["details"]
    missing = feedback(acme, recall_id, {"memory_id": other})
    assert missing.status_code == 400
    assert "relevant" in missing.json()["error"]["details"]
    assert not RecallFeedback.objects.exists()


def test_it_needs_the_context_permission(acme) -> None:
    recall_id, memory_id = remembered_and_recalled(acme)
    reader = api_client(make_api_key([acme.namespace], ["memories:read"]))
    response = feedback(acme, recall_id, {"memory_id": memory_id, "relevant": True}, reader)
    assert response.status_code == 403


def test_the_note_is_encrypted_at_rest_and_erased_with_the_subject(acme) -> None:
    recall_id, memory_id = remembered_and_recalled(acme)
    response = feedback(
        acme, recall_id, {"memory_id": memory_id, "relevant": False, "note": CANARY}
    )
    assert response.status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("SELECT content_encrypted FROM recall_recallfeedback")
        (sealed,) = cursor.fetchone()
        assert b"zebra-canary" not in bytes(sealed)
    assert "zebra" not in str(AuditEvent.objects.get(action="recall.feedback").details)
    erased = acme.client.post(acme.url("subjects/u1/erase"), format="json")
    assert erased.status_code == 200
    assert not RecallFeedback.objects.exists()


def test_the_subjects_export_holds_its_recalls_feedback_and_eval_questions(acme) -> None:
    """What the person asked (while kept), what they were served and judged, and the eval
    questions asked about them are theirs too: in the export, valid against its schema."""
    import json

    import jsonschema

    from apps.audit.actors import Actor
    from apps.evaluation.services import eval_set_import_jsonl
    from apps.memories.api.views import EXPORT_SCHEMA

    recall_id, memory_id = remembered_and_recalled(acme)
    feedback(acme, recall_id, {"memory_id": memory_id, "relevant": True, "note": CANARY})
    question = {"question": "Which seat does the user like?", "subject": "u1",
                "expected_memory_ids": [memory_id], "category": "travel"}  # fmt: skip
    eval_set_import_jsonl(
        actor=Actor.system("tests"), namespace=acme.namespace, name="seats",
        text=json.dumps(question),
    )  # fmt: skip
    document = acme.client.get(acme.url("subjects/u1/export")).json()
    jsonschema.validate(document, EXPORT_SCHEMA, cls=jsonschema.Draft202012Validator)
    (recall,) = document["recalls"]
    assert recall["recall_id"] == recall_id
    assert recall["query"] == "window seat"
    assert recall["served_memory_ids"] == [memory_id]
    assert [(f["memory_id"], f["relevant"], f["note"]) for f in recall["feedback"]] == [
        (memory_id, True, CANARY)
    ]
    (case,) = document["eval_cases"]
    assert (case["eval_set"], case["question"]) == ("seats", "Which seat does the user like?")
    assert case["expected_memory_ids"] == [memory_id]
    other = acme.client.post(acme.url("memories"), {"subject": "u2", "content": "x"}, format="json")
    assert other.status_code == 201
    assert acme.client.get(acme.url("subjects/u2/export")).json()["recalls"] == []
