"""The SDK's recall, feedback and context calls against the live server."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest
from memoryhub_client import (
    NO_RETRIES,
    ChatMessage,
    ContextResponse,
    MemoryHub,
    Namespace,
    RecallComponents,
    RecallOptions,
    RecallResponse,
)


def recorded_bodies() -> tuple[Namespace, list[dict]]:
    """A namespace whose calls are answered by a recorder (an empty recall), and the JSON
    bodies it was sent."""
    bodies: list[dict] = []

    def record(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json={"results": [], "recall_id": None, "timings_ms": {}})

    hub = MemoryHub(
        "http://recorder", "key", retries=NO_RETRIES, transport=httpx.MockTransport(record)
    )
    return hub.namespace("acme"), bodies


def test_it_recalls_with_score_components(ns: Namespace) -> None:
    tea = ns.memories.create("Likes green tea in the morning", subject="u1")
    ns.memories.create("Plays tennis on Sundays", subject="u1")
    answer = ns.recall("green tea", subject="u1", k=5)
    assert isinstance(answer, RecallResponse)
    assert answer.recall_id
    top = answer.results[0]
    assert top.memory.id == tea.id
    assert isinstance(top.components, RecallComponents)
    assert top.components.vector > 0
    assert 0 <= top.relevance <= 1
    assert top.score == max(hit.score for hit in answer.results)


def test_it_recalls_within_filters(ns: Namespace) -> None:
    ns.memories.create("Drinks tea", subject="u1", tags=["drinks"])
    ns.memories.create("Tea ceremony class on Friday", subject="u1", tags=["plans"])
    answer = ns.recall("tea", subject="u1", filters={"tags": ["plans"]})
    assert [hit.memory.content for hit in answer.results] == ["Tea ceremony class on Friday"]


def test_it_leaves_out_shared_memories_when_asked(ns: Namespace) -> None:
    mine = ns.memories.create("Drinks oolong tea", subject="u1")
    shared = ns.memories.create("The café serves tea until noon", subject=None)
    both = ns.recall("tea", subject="u1")
    assert {hit.memory.id for hit in both.results} == {mine.id, shared.id}
    options: RecallOptions = {"include_shared": False, "k": 5}
    alone = ns.recall("tea", subject="u1", **options)
    assert [hit.memory.id for hit in alone.results] == [mine.id]


def test_it_sends_each_recall_option_as_the_api_names_it() -> None:
    ns, bodies = recorded_bodies()
    ns.recall(
        "tea",
        subject="u1",
        k=3,
        filters={"tags": ["plans"], "since": datetime(2024, 5, 1, tzinfo=UTC)},
        include_shared=False,
        mmr=0.5,
        min_relevance=0.2,
        include_history=True,
    )
    ns.recall("tea", k=None, mmr=None)
    assert bodies == [
        {
            "subject": "u1",
            "query": "tea",
            "k": 3,
            "filters": {"tags": ["plans"], "since": "2024-05-01T00:00:00+00:00"},
            "include_shared": False,
            "mmr": 0.5,
            "min_relevance": 0.2,
            "include_history": True,
        },
        {"query": "tea"},
    ]


def test_it_refuses_an_unknown_recall_option_before_sending() -> None:
    ns, bodies = recorded_bodies()
    with pytest.raises(TypeError, match="kk"):
        ns.recall("tea", kk=3)  # type: ignore[call-arg]
    assert bodies == []


def test_it_gives_feedback_on_a_served_memory(ns: Namespace) -> None:
    memory = ns.memories.create("Allergic to shellfish", subject="u1")
    answer = ns.recall("shellfish allergy", subject="u1")
    assert answer.recall_id is not None
    feedback = ns.feedback(answer.recall_id, memory_id=memory.id, relevant=False, note="old")
    assert (feedback.recall_id, feedback.memory_id) == (answer.recall_id, memory.id)
    assert feedback.relevant is False
    again = ns.feedback(answer.recall_id, memory_id=memory.id, relevant=True)
    assert (again.id, again.relevant) == (feedback.id, True)


def test_it_assembles_context_within_the_budget(ns: Namespace) -> None:
    ns.memories.create("Answer in French", subject="u1", kind="procedural")
    ns.memories.create("Lives in Lyon", subject="u1")
    context = ns.context(
        "Where does the user live?",
        subject="u1",
        model="gpt-4o",
        max_context_tokens=2000,
        system_prompt="You are helpful.",
    )
    assert isinstance(context, ContextResponse)
    assert context.messages[0] == ChatMessage(role="system", content=context.messages[0].content)
    assert "Answer in French" in context.messages[0].content
    assert context.messages[-1].content == "Where does the user live?"
    assert context.total_tokens <= context.budget_tokens
    memories = next(section for section in context.sections if section.name == "memories")
    assert any(item.components for item in memories.items)
    assert context.exact is True


def test_as_of_before_an_update_serves_the_old_value_sync_and_async(
    ns: Namespace, server_url: str, acme
) -> None:  # type: ignore[no-untyped-def]
    import asyncio
    import time

    from memoryhub_client import AsyncMemoryHub

    fact = ns.memories.create("The user is allergic to kiwi.", subject="u1")
    time.sleep(0.01)
    before = datetime.now(UTC)
    ns.memories.update(fact.id, content="The user is allergic to mango.", reason="corrected")
    then = ns.recall("allergy", subject="u1", as_of=before)
    assert [hit.memory.content for hit in then.results] == ["The user is allergic to kiwi."]
    now = ns.recall("allergy", subject="u1")
    assert [hit.memory.content for hit in now.results] == ["The user is allergic to mango."]
    told = ns.context("allergy", subject="u1", model="gpt-4o", as_of=before.isoformat())
    prompt = " ".join(message.content for message in told.messages)
    assert "kiwi" in prompt
    assert "mango" not in prompt

    async def asked_asynchronously() -> list[str]:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            answer = await hub.namespace(acme.slug).recall("allergy", subject="u1", as_of=before)
            return [hit.memory.content for hit in answer.results]

    assert asyncio.run(asked_asynchronously()) == ["The user is allergic to kiwi."]
