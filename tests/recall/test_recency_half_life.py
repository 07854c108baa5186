"""The namespace's recency half-life in recall: of two otherwise equal memories the newer ranks
first, the recency component is 0.5 ** (age / half-life) with the namespace's current value
(read at each request), and a half-life of 0 turns recency off."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.actors import Actor
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memory_create
from apps.namespaces.services import namespace_update
from apps.recall.ranking import Weights
from apps.recall.search import RecallRequest, recall_memories
from tests.conftest import Tenant

ACTOR = Actor.system("tests")
TEXT = "Booked a table at the harbour restaurant"
QUERY = "Which restaurant was booked?"


def remember(tenant: Tenant, days_ago: float, content: str = TEXT, **fields) -> Memory:
    return memory_create(
        actor=ACTOR,
        namespace=tenant.namespace,
        item=NewMemory(
            subject_external_id="u1",
            content=content,
            occurred_at=timezone.now() - timedelta(days=days_ago),
            **fields,
        ),
    )


def set_half_life(tenant: Tenant, days: float) -> None:
    tenant.namespace = namespace_update(
        actor=ACTOR, namespace=tenant.namespace, recency_half_life_days=days
    )


def recalled(tenant: Tenant) -> dict[str, dict[str, float]]:
    """Memory id -> score components, through the API (the namespace as stored), best first."""
    response = tenant.client.post(
        tenant.url("recall"), {"subject": "u1", "query": QUERY, "k": 10}, format="json"
    )
    assert response.status_code == 200, response.json()
    return {hit["memory"]["id"]: hit["components"] for hit in response.json()["results"]}


@pytest.mark.django_db
@pytest.mark.parametrize("newer_written_first", [True, False])
def test_of_two_equal_memories_the_newer_ranks_first(
    acme: Tenant, newer_written_first: bool
) -> None:
    set_half_life(acme, 30)
    if newer_written_first:
        new, old = remember(acme, 1), remember(acme, 90)
    else:
        old, new = remember(acme, 90), remember(acme, 1)
    outcome = recall_memories(
        RecallRequest(
            actor=ACTOR, namespace=acme.namespace, subject_external_id="u1", query=QUERY, k=2
        )
    )
    assert [hit.memory.id for hit in outcome.hits] == [new.id, old.id]
    first, second = (hit.components for hit in outcome.hits)
    # Everything else equal: the scores differ by the recency term alone.
    for name in ("vector", "context", "keyword", "boosts", "importance"):
        assert first[name] == second[name], name
    assert first["final"] - second["final"] == pytest.approx(
        Weights().recency * (first["recency"] - second["recency"]), abs=2e-6
    )


@pytest.mark.django_db
def test_the_recency_component_halves_every_half_life_of_the_namespace(acme: Tenant) -> None:
    set_half_life(acme, 10)
    ten, twenty = remember(acme, 10), remember(acme, 20)
    components = recalled(acme)
    assert components[str(ten.id)]["recency"] == pytest.approx(0.5, rel=1e-4)
    assert components[str(twenty.id)]["recency"] == pytest.approx(0.25, rel=1e-4)


@pytest.mark.django_db
def test_changing_the_half_life_changes_the_recency_component_as_the_formula_says(
    acme: Tenant,
) -> None:
    set_half_life(acme, 10)
    ten, twenty = remember(acme, 10), remember(acme, 20)
    recalled(acme)
    set_half_life(acme, 40)  # the next request reads the namespace again
    components = recalled(acme)
    assert components[str(ten.id)]["recency"] == pytest.approx(0.5 ** (10 / 40), rel=1e-4)
    assert components[str(twenty.id)]["recency"] == pytest.approx(0.5 ** (20 / 40), rel=1e-4)


@pytest.mark.django_db
def test_a_half_life_of_zero_turns_recency_off(acme: Tenant) -> None:
    set_half_life(acme, 0)
    new, old = remember(acme, 1), remember(acme, 400)
    components = recalled(acme)
    assert components[str(new.id)]["recency"] == 1.0
    assert components[str(old.id)]["recency"] == 1.0
    assert components[str(new.id)]["final"] == components[str(old.id)]["final"]


@pytest.mark.django_db
def test_a_short_half_life_puts_a_new_memory_before_a_more_important_old_one(
    acme: Tenant,
) -> None:
    # Recency weighs 0.02 and importance 0.6 in the final score: an importance lead of 0.01
    # (0.006) loses to a recency lead of nearly 1 (half-life 1 day: 0.02), and wins against
    # one of about 0.02 (half-life 1000 days: 0.0004).
    old = remember(acme, 30, importance=0.51)
    new = remember(acme, 0.01, importance=0.5)
    set_half_life(acme, 1)
    assert list(recalled(acme)) == [str(new.id), str(old.id)]
    set_half_life(acme, 1000)
    assert list(recalled(acme)) == [str(old.id), str(new.id)]
