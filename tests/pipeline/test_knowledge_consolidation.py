"""Consolidation of atomic facts through the API: a later fact supersedes only its slot, a
negation ends facts with their history kept, uncertain facts wait for review, and time
words land in the time fields."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEvent
from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_memory
from apps.pipeline.models import ConsolidationLog
from tests.conftest import Tenant


def say(tenant: Tenant, *turns: str) -> None:
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": [{"role": "user", "content": turn} for turn in turns],
    }
    job = tenant.client.post(tenant.url("messages"), body, format="json").json()
    assert job["status"] == "succeeded", job


def facts(**filters) -> list[str]:
    keys = KeyCache()
    rows = Memory.objects.filter(kind="semantic", **filters).order_by("created_at")
    return [open_memory(keys, m) for m in rows]


def current() -> list[str]:
    return sorted(facts(status="active", valid_to__isnull=True))


@pytest.mark.django_db
def test_a_later_fact_supersedes_only_the_slot_it_changes(acme: Tenant) -> None:
    say(acme, "I live in Hangzhou and I work as a pastry chef.")
    say(acme, "I moved to Shanghai last week.")
    assert current() == ["The user lives in Shanghai.", "The user works as a pastry chef."]
    old = Memory.objects.get(kind="semantic", valid_to__isnull=False)
    assert open_memory(KeyCache(), old) == "The user lives in Hangzhou."
    (new,) = [m for m in Memory.objects.filter(kind="semantic") if "supersedes" in m.metadata]
    assert open_memory(KeyCache(), new) == "The user lives in Shanghai."
    assert new.metadata["supersedes"] == [str(old.id)]
    assert (new.created_at - new.valid_from).days == 7  # "last week": it holds from then


@pytest.mark.django_db
def test_a_negation_ends_the_fact_with_its_history_and_an_audit_event(acme: Tenant) -> None:
    say(acme, "I'm allergic to peanuts.")
    say(acme, "Actually, I'm not allergic to peanuts, it's shellfish.")
    assert current() == ["The user is allergic to shellfish."]
    ended = Memory.objects.get(kind="semantic", valid_to__isnull=False)
    assert open_memory(KeyCache(), ended) == "The user is allergic to peanuts."
    assert ended.metadata["ended"] == "negated or changed"
    event = AuditEvent.objects.get(action="memory.supersede", object_id=str(ended.id))
    assert event.details == {"successor": None, "reason": "negated"}
    assert ConsolidationLog.objects.filter(
        decision="supersede", related_id=ended.id, reason__startswith="ended"
    ).exists()


@pytest.mark.django_db
def test_a_negation_in_the_same_batch_ends_the_fact_of_an_earlier_turn(acme: Tenant) -> None:
    say(acme, "I'm allergic to eggs.", "Wait, I'm not allergic to eggs.")
    assert current() == []
    assert facts() == ["The user is allergic to eggs."]  # stored, and ended at once


@pytest.mark.django_db
def test_uncertain_facts_wait_for_review_and_supersede_nothing(acme: Tenant) -> None:
    say(acme, "I live in Quito.")
    say(acme, "I probably live in Lima now.")
    assert current() == ["The user lives in Quito."]
    assert facts(status="pending_review") == ["The user lives in Lima."]


@pytest.mark.django_db
def test_plans_carry_their_date_and_lapse_after_it(acme: Tenant) -> None:
    say(acme, "Next month I'm going to Kyoto for a baking course.")
    (plan,) = Memory.objects.filter(kind="semantic")
    assert open_memory(KeyCache(), plan) == "The user is going to Kyoto for a baking course."
    assert plan.occurred_at is not None
    assert plan.expires_at is not None
    assert plan.expires_at > plan.occurred_at


@pytest.mark.django_db
def test_a_plan_that_happened_becomes_an_event(acme: Tenant) -> None:
    say(acme, "I'm planning to run the Berlin marathon.")
    say(acme, "I ran the Berlin marathon last week.")
    assert current() == ["The user ran the Berlin marathon."]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("first", "correction", "query"),
    [
        (
            "I'm allergic to peanuts, they make my throat swell.",
            "Actually I'm not allergic to peanuts, the allergist says it's shellfish.",
            "What is the user allergic to?",
        ),
        (
            "I take lisinopril every morning.",
            "My doctor switched me from lisinopril to amlodipine.",
            "Which medication does the user take?",
        ),
    ],
)
def test_a_corrected_turn_ends_with_its_fact_and_is_history_below_the_correction(
    acme: Tenant, first: str, correction: str, query: str
) -> None:
    """A fact corrected in a later turn: the turn that stated the old value ends with it
    (the same valid_to, kept as what was said), so default recall serves only the
    correction; asked for history, the old turn comes back marked and below it."""
    from apps.audit.actors import Actor
    from apps.recall.search import RecallRequest, recall_memories
    from apps.recall.statements import RecallFilters

    say(acme, first)
    say(acme, correction)
    keys = KeyCache()
    old = next(m for m in Memory.objects.filter(kind="episodic") if open_memory(keys, m) == first)
    ended_fact = Memory.objects.get(pk=old.metadata["ended_with"])
    assert old.valid_to is not None
    assert old.valid_to == ended_fact.valid_to
    assert old.superseded_by_id == ended_fact.superseded_by_id

    def recalled(history: bool) -> list[tuple[Memory, bool]]:
        outcome = recall_memories(
            RecallRequest(
                actor=Actor.system("tests"),
                namespace=acme.namespace,
                subject_external_id="u1",
                query=query,
                k=10,
                log=False,
                filters=RecallFilters(include_history=history),
            )
        )
        return [(hit.memory, hit.current) for hit in outcome.hits]

    assert old.pk not in {memory.pk for memory, _ in recalled(False)}
    with_history = recalled(True)
    position = next(i for i, (memory, _) in enumerate(with_history) if memory.pk == old.pk)
    assert with_history[position][1] is False
    currents = [current for _, current in with_history]
    assert currents == sorted(currents, reverse=True)  # history after every current memory
    assert any(open_memory(keys, m) == correction for m, _ in with_history[:position])


@pytest.mark.django_db
def test_a_chinese_fact_is_embedded_once_by_the_multilingual_model(
    acme: Tenant, use_multilingual: object
) -> None:
    """Consolidation embeds a Chinese fact to find its near duplicates; storing it reuses
    that vector, and a restatement is recognised as the same fact."""
    from apps.memories.multilingual import set_multilingual_provider

    class Counting:
        name = use_multilingual.name  # type: ignore[attr-defined]
        dimensions = use_multilingual.dimensions  # type: ignore[attr-defined]

        def __init__(self) -> None:
            self.texts: list[str] = []

        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            self.texts.extend(texts)
            return use_multilingual.embed_documents(texts)  # type: ignore[attr-defined]

        def embed_query(self, text):  # type: ignore[no-untyped-def]
            return use_multilingual.embed_query(text)  # type: ignore[attr-defined]

    counting = Counting()
    set_multilingual_provider(counting)  # type: ignore[arg-type]
    try:
        say(acme, "我对花生过敏。")
        assert current() == ["用户对花生过敏。"]
        assert counting.texts.count("用户对花生过敏。") == 1
        stored = Memory.objects.get(kind="semantic")
        assert stored.multilingual_model == use_multilingual.name  # type: ignore[attr-defined]
        say(acme, "我对花生过敏")
        assert current() == ["用户对花生过敏。"]  # the same fact, said again
    finally:
        set_multilingual_provider(None)
