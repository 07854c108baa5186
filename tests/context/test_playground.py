"""The playground page, server-side: a posted configuration, one strategy or the four side
by side, an htmx partial, a saved set-up shared by link, and only the user's namespaces."""

from __future__ import annotations

import re
import uuid

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from apps.audit.actors import Actor
from apps.memories.services import NewMemory, memory_create
from apps.namespaces.services import membership_set
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.recall.models import RecallFeedback, RecallLog
from tests.conftest import Tenant

ACTOR = Actor.system("tests")
URL = "/playground/"


@pytest.fixture
def seeded(acme: Tenant) -> Tenant:
    memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(
            subject_external_id="u1", content="The user is vegetarian and allergic to peanuts."
        ),
    )
    messages_ingest(
        actor=ACTOR, namespace=acme.namespace, subject_external_id="u1", session_external_id="s1",
        messages=[IncomingMessage("user", "I am planning a dinner party for six friends."),
                  IncomingMessage("assistant", "Fun! Any dietary needs?")],
    )  # fmt: skip
    return acme


def config(**fields) -> dict:
    base = {"namespace": "acme", "subject": "u1", "session": "s1", "query": "What should I cook?",
            "model": "gpt-4o", "reserve_tokens": 1024, "strategy": "buffer", "recall_k": 20,
            "window": 10, "buffer_tokens": 2000, "placement": "edges"}  # fmt: skip
    return base | fields


@pytest.mark.django_db
def test_a_posted_configuration_assembles_and_explains(
    seeded: Tenant, alice_client: Client
) -> None:
    page = alice_client.post(URL, config()).content.decode()
    assert "Assembled prompt" in page
    assert "The user is vegetarian and allergic to peanuts." in page
    assert "why recalled" in page
    assert "I am planning a dinner party for six friends." in page
    assert 'class="token-bar"' in page
    assert '<rect class="sec-memories" x="' in page  # the bar is drawn without inline style
    assert " style=" not in page  # which the page's Content-Security-Policy would block
    assert RecallLog.objects.filter(purpose="playground").count() == 1


@pytest.mark.django_db
def test_compare_shows_the_four_strategies_side_by_side(
    seeded: Tenant, alice_client: Client
) -> None:
    page = alice_client.post(URL, config(compare="on")).content.decode()
    for strategy in ("buffer", "window", "summary", "summary_buffer"):
        assert f'data-strategy="{strategy}"' in page


@pytest.mark.django_db
def test_htmx_gets_only_the_result(seeded: Tenant, alice_client: Client) -> None:
    partial = alice_client.post(URL, config(), HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section id="result"')
    assert "playground-form" not in partial  # the result only; its feedback buttons are in it


@pytest.mark.django_db
def test_one_click_on_a_served_memory_is_feedback_on_its_recall(
    seeded: Tenant, alice_client: Client
) -> None:
    page = alice_client.post(URL, config()).content.decode()
    recall = re.search(r'name="recall" value="([0-9a-f-]{36})"', page)
    memory = re.search(r'name="memory" value="([0-9a-f-]{36})"', page)
    assert recall is not None
    assert memory is not None
    answer = alice_client.post(
        reverse("dashboard:playground:feedback"),
        {"namespace": "acme", "recall": recall[1], "memory": memory[1], "relevant": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200
    assert "Marked relevant" in answer.content.decode()
    feedback = RecallFeedback.objects.get(recall_id=recall[1])
    assert str(feedback.memory_id) == memory[1]
    assert feedback.relevant
    # A memory the recall did not serve is refused, in the one error shape's words.
    refused = alice_client.post(
        reverse("dashboard:playground:feedback"),
        {"namespace": "acme", "recall": recall[1], "memory": str(uuid.uuid4()), "relevant": "0"},
    )
    assert refused.status_code == 400
    assert "did not serve" in refused.content.decode()


@pytest.mark.django_db
def test_a_viewer_sees_the_assembly_without_feedback_buttons(seeded: Tenant) -> None:
    vera = User.objects.create_user("vera", password="vera-password-1")
    membership_set(actor=ACTOR, namespace=seeded.namespace, user=vera, role="viewer")
    client = Client()
    client.force_login(vera)
    page = client.post(URL, config()).content.decode()
    assert "The user is vegetarian and allergic to peanuts." in page
    assert 'name="relevant"' not in page  # feedback is an editor's: no button that answers 403


@pytest.mark.django_db
def test_errors_show_on_the_page_not_as_a_crash(seeded: Tenant, alice_client: Client) -> None:
    page = alice_client.post(URL, config(max_context_tokens=1030)).content.decode()
    assert "cannot hold the system prompt and the query" in page


@pytest.mark.django_db
def test_only_the_users_namespaces_can_be_used(seeded: Tenant, globex: Tenant) -> None:
    bob = User.objects.create_user("bob", password="bob-password-1")
    membership_set(actor=ACTOR, namespace=globex.namespace, user=bob, role="viewer")
    client = Client()
    client.force_login(bob)
    page = client.post(URL, config()).content.decode()
    assert "Assembled prompt" not in page
    assert "vegetarian" not in page
    assert "Select a valid choice" in page


@pytest.mark.django_db
def test_a_saved_set_up_is_shared_by_link_and_only_with_its_namespace(
    seeded: Tenant, globex: Tenant, alice_client: Client
) -> None:
    from apps.context.models import PlaygroundConfig

    page = alice_client.post(URL, config(save="1")).content.decode()
    saved = PlaygroundConfig.objects.get()
    assert f"?saved={saved.id}" in page
    assert b"What should I cook" not in bytes(saved.content_encrypted)  # encrypted at rest
    logged = RecallLog.objects.count()
    shared = alice_client.get(f"{URL}?saved={saved.id}").content.decode()
    assert "What should I cook" in shared  # the form is filled in
    assert "The user is vegetarian and allergic to peanuts." not in shared  # not run on GET
    assert RecallLog.objects.count() == logged  # a GET changes nothing
    rerun = alice_client.post(URL, config()).content.decode()
    assert "The user is vegetarian and allergic to peanuts." in rerun
    bob = User.objects.create_user("bob", password="bob-password-1")
    membership_set(actor=ACTOR, namespace=globex.namespace, user=bob, role="viewer")
    outsider = Client()
    outsider.force_login(bob)
    refused = outsider.get(f"{URL}?saved={saved.id}").content.decode()
    assert "Saved configuration not found." in refused
    assert "vegetarian" not in refused
    assert "What should I cook" not in refused


@pytest.mark.django_db
def test_an_invalid_form_shows_its_errors_in_the_htmx_result(
    seeded: Tenant, alice_client: Client
) -> None:
    partial = alice_client.post(URL, config(query=""), HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section id="result"')
    assert "This field is required." in partial
