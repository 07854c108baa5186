"""The SDK's recall, feedback and context calls against the live server."""

from __future__ import annotations

from memoryhub_client import (
    ChatMessage,
    ContextResponse,
    Namespace,
    RecallComponents,
    RecallResponse,
)


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
