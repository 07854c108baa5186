"""History on request: recall serves what holds; `include_history` brings back the facts
superseded or ended, marked `current: false` and ranked below every current memory found."""

from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.pipeline.test_knowledge_consolidation import say


def recall(tenant: Tenant, **body: object) -> list[dict]:
    response = tenant.client.post(
        tenant.url("recall"), {"subject": "u1", "query": "allergic to", **body}, format="json"
    )
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def contents(results: list[dict]) -> list[str]:
    return [hit["memory"]["content"] for hit in results]


@pytest.mark.django_db
def test_history_is_out_by_default_and_below_current_when_asked_for(acme: Tenant) -> None:
    say(acme, "I'm allergic to peanuts.")
    say(acme, "Actually, I'm not allergic to peanuts, it's shellfish.")
    default = recall(acme)
    assert "The user is allergic to shellfish." in contents(default)
    assert "The user is allergic to peanuts." not in contents(default)
    assert all(hit["current"] for hit in default)

    everything = recall(acme, include_history=True)
    found = contents(everything)
    assert "The user is allergic to peanuts." in found
    stale = found.index("The user is allergic to peanuts.")
    assert everything[stale]["current"] is False
    assert everything[stale]["memory"]["valid_to"] is not None
    assert [hit["current"] for hit in everything] == sorted(
        (hit["current"] for hit in everything), reverse=True
    )  # every current memory before any history


@pytest.mark.django_db
def test_include_history_must_be_a_boolean(acme: Tenant) -> None:
    response = acme.client.post(
        acme.url("recall"), {"query": "x", "include_history": "sometimes"}, format="json"
    )
    assert response.status_code == 400
    assert "include_history" in response.json()["error"]["details"]
