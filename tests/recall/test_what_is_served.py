"""What the app is told is current: a hand correction of a fact takes the turn that stated
the old value out of recall and context; history brings it back marked; `as_of` serves
what held at a moment, and a bad `as_of` is refused and changes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.models import Memory
from apps.recall.models import RecallLog
from tests.conftest import Tenant

TURN = "I'm allergic to kiwi, so no kiwi in desserts please."


def _said(tenant: Tenant) -> tuple[dict, dict]:
    body = {"subject": "u1", "session": "s1", "messages": [{"role": "user", "content": TURN}]}
    job = tenant.client.post(tenant.url("messages"), body, format="json").json()
    assert job["status"] == "succeeded", job
    listed = tenant.client.get(tenant.url("memories"), {"subject": "u1"}).json()["results"]
    fact = next(m for m in listed if m["kind"] == "semantic" and "kiwi" in m["content"])
    turn = next(m for m in listed if m["kind"] == "episodic")
    return fact, turn


def _recalled(tenant: Tenant, **options: object) -> list[dict]:
    body = {"subject": "u1", "query": "What is the user allergic to?", **options}
    response = tenant.client.post(tenant.url("recall"), body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()["results"]


@pytest.mark.django_db
def test_a_hand_correction_takes_the_source_turn_out_of_recall_and_context(acme: Tenant) -> None:
    fact, turn = _said(acme)
    assert turn["id"] in {hit["memory"]["id"] for hit in _recalled(acme)}
    patched = acme.client.patch(
        acme.url(f"memories/{fact['id']}"), {"content": "The user is allergic to mango."},
        format="json",
    )  # fmt: skip
    assert patched.status_code == 200
    assert turn["id"] not in {hit["memory"]["id"] for hit in _recalled(acme)}
    context = acme.client.post(
        acme.url("context"), {"subject": "u1", "query": "allergy", "model": "gpt-4o"},
        format="json",
    ).json()  # fmt: skip
    prompt = " ".join(message["content"] for message in context["messages"])
    assert "mango" in prompt
    assert "kiwi" not in prompt
    history = {hit["memory"]["id"]: hit for hit in _recalled(acme, include_history=True)}
    old = history[turn["id"]]
    assert old["current"] is False
    assert old["memory"]["valid_to"] is not None
    assert old["memory"]["superseded_by"] == fact["id"]
    assert AuditEvent.objects.filter(action="memory.supersede", object_id=turn["id"]).exists()


@pytest.mark.django_db
def test_context_with_history_marks_the_old_line_with_the_day_it_ended(acme: Tenant) -> None:
    fact, turn = _said(acme)
    acme.client.delete(acme.url(f"memories/{fact['id']}"))
    ended = Memory.objects.get(pk=turn["id"]).valid_to
    assert ended is not None
    context = acme.client.post(
        acme.url("context"),
        {"subject": "u1", "query": "kiwi allergy", "model": "gpt-4o", "include_history": True},
        format="json",
    ).json()
    prompt = " ".join(message["content"] for message in context["messages"])
    assert f"(superseded {ended.date().isoformat()}) {TURN}" in prompt


@pytest.mark.django_db
def test_as_of_before_a_correction_serves_the_old_text_and_not_the_new(acme: Tenant) -> None:
    fact, _ = _said(acme)
    before = timezone.now()
    acme.client.patch(
        acme.url(f"memories/{fact['id']}"), {"content": "The user is allergic to mango."},
        format="json",
    )  # fmt: skip
    then = {hit["memory"]["id"]: hit["memory"] for hit in _recalled(acme, as_of=before.isoformat())}
    assert "kiwi" in then[fact["id"]]["content"]
    assert then[fact["id"]]["version"] == 1
    texts = " ".join(memory["content"] for memory in then.values())
    assert "mango" not in texts
    now = {hit["memory"]["id"]: hit["memory"] for hit in _recalled(acme)}
    assert now[fact["id"]]["content"] == "The user is allergic to mango."


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("as_of", "problem"),
    [
        ("yesterday", "unparsable"),
        ("2026-02-30T10:00:00Z", "unparsable"),
        ("2026-03-03T10:00:00", "no timezone"),
        ("future", "in the future"),
    ],
)
def test_a_bad_as_of_is_a_400_and_changes_nothing(acme: Tenant, as_of: str, problem: str) -> None:
    if as_of == "future":
        as_of = (timezone.now() + timedelta(minutes=5)).isoformat()
    logs = RecallLog.objects.count()
    for path in ("recall", "context"):
        response = acme.client.post(
            acme.url(path), {"subject": "u1", "query": "tea", "as_of": as_of}, format="json"
        )
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "invalid_as_of"
        assert error["details"] == {"as_of": [problem]}
    assert RecallLog.objects.count() == logs


@pytest.mark.django_db
def test_relink_history_ends_the_turns_of_facts_ended_before(acme: Tenant) -> None:
    from io import StringIO

    from django.core.management import call_command

    fact, turn = _said(acme)
    now = timezone.now()
    # As data stored before turns ended with their facts: the fact ended, its turn current.
    Memory.objects.filter(pk=fact["id"]).update(valid_to=now)
    out = StringIO()
    call_command("relink_history", "--namespace", acme.slug, stdout=out)
    assert out.getvalue().strip() == "1 turns ended with their facts in acme."
    stored = Memory.objects.get(pk=turn["id"])
    assert stored.valid_to == now
    assert stored.metadata["ended_with"] == fact["id"]
    call_command("relink_history", "--namespace", acme.slug, stdout=out)  # again: nothing new
    assert out.getvalue().strip().endswith("0 turns ended with their facts in acme.")


def _out_then_back_as_history(tenant: Tenant, turn: dict, successor: str | None) -> None:
    """The turn is out of the default recall and context, and history brings it back marked:
    `current` false, its `valid_to`, its successor."""
    assert turn["id"] not in {hit["memory"]["id"] for hit in _recalled(tenant)}
    context = tenant.client.post(
        tenant.url("context"), {"subject": "u1", "query": "allergy", "model": "gpt-4o"},
        format="json",
    ).json()  # fmt: skip
    assert "kiwi" not in " ".join(message["content"] for message in context["messages"])
    history = {hit["memory"]["id"]: hit for hit in _recalled(tenant, include_history=True)}
    old = history[turn["id"]]
    assert old["current"] is False
    assert old["memory"]["valid_to"] is not None
    assert old["memory"]["superseded_by"] == successor


@pytest.mark.django_db
def test_a_dashboard_edit_takes_the_source_turn_out(acme: Tenant, alice_client: Client) -> None:
    fact, turn = _said(acme)
    edited = alice_client.post(
        f"/n/{acme.slug}/memories/{fact['id']}/edit/",
        {"content": "The user is allergic to mango.", "kind": "semantic", "tags": "",
         "importance": "0.9", "reason": "the person told us"},
    )  # fmt: skip
    assert edited.status_code == 302, edited.content.decode()[:500]
    _out_then_back_as_history(acme, turn, successor=fact["id"])


@pytest.mark.django_db
def test_a_portal_correction_takes_the_source_turn_out(acme: Tenant) -> None:
    from apps.memories.models import Subject
    from apps.privacy.services import portal_link_create

    fact, turn = _said(acme)
    subject = Subject.objects.get(namespace=acme.namespace, external_id="u1")
    portal = Client()
    link = portal_link_create(
        actor=Actor.system("tests"), namespace=acme.namespace, subject=subject,
        base_url="http://testserver",
    )  # fmt: skip
    assert portal.get(link.url.removeprefix("http://testserver")).status_code == 303
    corrected = portal.post(
        f"/portal/{subject.pk}/memories/{fact['id']}/correct/",
        {"content": "The user is allergic to mango."},
    )
    assert corrected.status_code in (200, 302), corrected.status_code
    assert Memory.objects.get(pk=fact["id"]).version == 2
    _out_then_back_as_history(acme, turn, successor=fact["id"])


@pytest.mark.django_db
def test_a_reviewer_ending_the_fact_takes_the_source_turn_out(
    acme: Tenant, alice_client: Client
) -> None:
    fact, turn = _said(acme)
    ended = alice_client.post(f"/n/{acme.slug}/memories/{fact['id']}/action/", {"action": "end"})
    assert ended.status_code == 302
    assert Memory.objects.get(pk=fact["id"]).valid_to is not None
    _out_then_back_as_history(acme, turn, successor=None)


@pytest.mark.django_db
def test_a_disputed_fact_ends_its_turn_until_a_reviewer_confirms_it(
    acme: Tenant, alice_client: Client
) -> None:
    fact, turn = _said(acme)
    said = {"subject": "u1", "session": "s1",
            "messages": [{"role": "user", "content": "That was my brother, not me."}]}  # fmt: skip
    job = acme.client.post(acme.url("messages"), said, format="json").json()
    assert job["status"] == "succeeded", job
    assert Memory.objects.get(pk=fact["id"]).status == "disputed"
    assert Memory.objects.get(pk=turn["id"]).valid_to is not None
    _out_then_back_as_history(acme, turn, successor=None)
    confirmed = alice_client.post(
        f"/n/{acme.slug}/memories/{fact['id']}/action/", {"action": "approve"}
    )
    assert confirmed.status_code == 302
    assert Memory.objects.get(pk=turn["id"]).valid_to is None
    assert turn["id"] in {hit["memory"]["id"] for hit in _recalled(acme)}
