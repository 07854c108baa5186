"""The playground page, server-side: a configuration in the address, one strategy or the four
side by side, an htmx partial, and only the user's own namespaces."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.audit.actors import Actor
from apps.memories.ingestion import IncomingMessage, messages_ingest
from apps.memories.models import RecallLog
from apps.memories.services import memory_create
from apps.namespaces.services import membership_set
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


@pytest.fixture
def seeded(acme: Tenant) -> Tenant:
    memory_create(actor=ACTOR, namespace=acme.namespace, subject_external_id="u1",
                  content="The user is vegetarian and allergic to peanuts.")  # fmt: skip
    messages_ingest(
        actor=ACTOR, namespace=acme.namespace, subject_external_id="u1", session_external_id="s1",
        messages=[IncomingMessage("user", "I am planning a dinner party for six friends."),
                  IncomingMessage("assistant", "Fun! Any dietary needs?")],
    )  # fmt: skip
    return acme


def config(**fields) -> str:
    base = {"namespace": "acme", "subject": "u1", "session": "s1", "query": "What should I cook?",
            "model": "gpt-4o", "reserve_tokens": 1024, "strategy": "buffer", "k": 20,
            "window": 10, "buffer_tokens": 2000, "placement": "edges"}  # fmt: skip
    return "/playground/?" + urlencode(base | fields)


@pytest.mark.django_db
def test_a_configuration_in_the_address_assembles_and_explains(
    seeded: Tenant, alice_client: Client
) -> None:
    page = alice_client.get(config()).content.decode()
    assert "Assembled prompt" in page
    assert "The user is vegetarian and allergic to peanuts." in page
    assert "why recalled" in page
    assert "I am planning a dinner party for six friends." in page
    assert 'class="token-bar"' in page
    assert RecallLog.objects.filter(purpose="playground").count() == 1


@pytest.mark.django_db
def test_compare_shows_the_four_strategies_side_by_side(
    seeded: Tenant, alice_client: Client
) -> None:
    page = alice_client.get(config(compare="on")).content.decode()
    for strategy in ("buffer", "window", "summary", "summary_buffer"):
        assert f'data-strategy="{strategy}"' in page


@pytest.mark.django_db
def test_htmx_gets_only_the_result(seeded: Tenant, alice_client: Client) -> None:
    partial = alice_client.get(config(), HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section id="result"')
    assert "<form" not in partial


@pytest.mark.django_db
def test_errors_show_on_the_page_not_as_a_crash(seeded: Tenant, alice_client: Client) -> None:
    page = alice_client.get(config(max_context_tokens=1030)).content.decode()
    assert "cannot hold the system prompt and the query" in page


@pytest.mark.django_db
def test_only_the_users_namespaces_can_be_used(seeded: Tenant, globex: Tenant) -> None:
    bob = User.objects.create_user("bob", password="bob-password-1")
    membership_set(actor=ACTOR, namespace=globex.namespace, user=bob, role="viewer")
    client = Client()
    client.force_login(bob)
    page = client.get(config()).content.decode()
    assert "Assembled prompt" not in page
    assert "vegetarian" not in page
    assert "Select a valid choice" in page
