"""The SDK's LlamaIndex adapters (memoryhub_client.integrations.llama_index) against the live
server: the retriever over recall, and the memory block over context and messages."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import sys

import pytest
from memoryhub_client import AsyncMemoryHub, MemoryHub, Namespace, NotFound, RecallComponents

from tests.conftest import Tenant

pytest.importorskip("llama_index.core", reason="the SDK's llama-index extra is not installed")

from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from memoryhub_client.integrations.llama_index import (
    MemoryHubMemoryBlock,
    MemoryHubRetriever,
)

# --- The retriever ----------------------------------------------------------------------------


def test_it_retrieves_the_stored_memory_as_a_scored_node(ns: Namespace) -> None:
    tea = ns.memories.create("Likes green tea in the morning", subject="user-42", tags=["food"])
    ns.memories.create("Plays tennis on Sundays", subject="user-42")
    results = MemoryHubRetriever(ns, subject="user-42").retrieve("green tea")
    top = results[0]
    assert isinstance(top, NodeWithScore)
    assert isinstance(top.node, TextNode)
    assert (top.node.node_id, top.node.get_content()) == (tea.id, tea.content)
    metadata = top.node.metadata
    assert (metadata["memory_id"], metadata["kind"], metadata["tags"]) == (
        tea.id,
        "semantic",
        ["food"],
    )
    assert top.score == metadata["score"] == max(result.score for result in results)
    assert set(metadata["components"]) == {f.name for f in dataclasses.fields(RecallComponents)}
    assert metadata["components"]["vector"] > 0
    assert 0 <= metadata["relevance"] <= 1
    assert metadata["recall_id"]


def test_it_shows_the_llm_and_the_embedder_only_the_memorys_content(ns: Namespace) -> None:
    ns.memories.create("Likes green tea", subject="user-42")
    (result,) = MemoryHubRetriever(ns, subject="user-42").retrieve("green tea")
    assert result.node.get_content(metadata_mode=MetadataMode.LLM) == "Likes green tea"
    assert result.node.get_content(metadata_mode=MetadataMode.EMBED) == "Likes green tea"
    assert "memory_id" in result.node.get_content(metadata_mode=MetadataMode.ALL)


def test_it_passes_its_recall_options(ns: Namespace) -> None:
    ns.memories.create("Drinks tea", subject="user-42", tags=["drinks"])
    plans = ns.memories.create("Tea ceremony class on Friday", subject="user-42", tags=["plans"])
    assert len(MemoryHubRetriever(ns, subject="user-42", k=1).retrieve("tea")) == 1
    filtered = MemoryHubRetriever(ns, subject="user-42", filters={"tags": ["plans"]}).retrieve(
        "tea"
    )
    assert [result.node.node_id for result in filtered] == [plans.id]
    assert MemoryHubRetriever(ns, subject="user-42", min_relevance=1.0).retrieve("tea") == []
    shared = ns.memories.create("The café serves tea until noon", subject=None)
    every = MemoryHubRetriever(ns, subject="user-42").retrieve("tea")
    assert shared.id in [result.node.node_id for result in every]
    own = MemoryHubRetriever(ns, subject="user-42", include_shared=False).retrieve("tea")
    assert shared.id not in [result.node.node_id for result in own]
    assert len(own) == len(every) - 1


def test_it_retrieves_nothing_of_another_namespaces_subject(
    ns: Namespace, globex_ns: Namespace, server_url: str, globex: Tenant, acme: Tenant
) -> None:
    ns.memories.create("Likes green tea", subject="user-42")
    assert MemoryHubRetriever(globex_ns, subject="user-42").retrieve("green tea") == []
    with MemoryHub(server_url, globex.raw_key) as hub, pytest.raises(NotFound):
        MemoryHubRetriever(hub.namespace(acme.slug), subject="user-42").retrieve("green tea")
    assert len(MemoryHubRetriever(ns, subject="user-42").retrieve("green tea")) == 1


def test_it_retrieves_asynchronously(server_url: str, acme: Tenant, ns: Namespace) -> None:
    tea = ns.memories.create("Likes green tea", subject="user-42")

    async def scenario() -> tuple[list[NodeWithScore], list[NodeWithScore]]:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            native = await MemoryHubRetriever(
                hub.namespace(acme.slug), subject="user-42"
            ).aretrieve("green tea")
        threaded = await MemoryHubRetriever(ns, subject="user-42").aretrieve("green tea")
        return native, threaded

    native, threaded = asyncio.run(scenario())
    assert [r.node.node_id for r in native] == [r.node.node_id for r in threaded] == [tea.id]


def test_it_refuses_a_sync_retrieval_on_an_async_namespace(server_url: str, acme: Tenant) -> None:
    async def scenario() -> None:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            retriever = MemoryHubRetriever(hub.namespace(acme.slug), subject="user-42")
            with pytest.raises(TypeError, match="AsyncNamespace"):
                retriever.retrieve("green tea")

    asyncio.run(scenario())


# --- The memory block -------------------------------------------------------------------------


def memory_with(block: MemoryHubMemoryBlock, session: str = "chat-1") -> Memory:
    """A Memory whose short-term part holds 28 tokens (about two turns): older turns go to
    the block."""
    return Memory.from_defaults(
        session_id=session, token_limit=40, chat_history_token_ratio=0.7, memory_blocks=[block]
    )


def system_text(messages: list[ChatMessage]) -> str:
    return "\n".join(m.content or "" for m in messages if m.role.value == "system")


def test_it_brings_recalled_memories_and_instructions_into_the_system_message(
    ns: Namespace,
) -> None:
    ns.memories.create("Lives in Lyon", subject="user-42")
    ns.memories.create("Answer in French", subject="user-42", kind="procedural")
    memory = memory_with(MemoryHubMemoryBlock(namespace=ns, subject="user-42"))
    messages = memory.get(input="Where do I live?")
    text = system_text(messages)
    assert "<MemoryHub>" in text
    assert "- Lives in Lyon" in text
    assert "- Answer in French" in text


def test_it_asks_nothing_without_a_user_message(ns: Namespace) -> None:
    ns.memories.create("Lives in Lyon", subject="user-42")
    memory = memory_with(MemoryHubMemoryBlock(namespace=ns, subject="user-42"))
    assert memory.get() == []
    assert ns.subjects.export("user-42")["recalls"] == []  # no context call was made
    assert memory.get(input="Where do I live?")
    assert len(ns.subjects.export("user-42")["recalls"]) == 1


def test_it_sends_the_turns_that_leave_the_short_term_memory(ns: Namespace) -> None:
    memory = memory_with(MemoryHubMemoryBlock(namespace=ns, subject="user-42"))
    memory.put_messages(
        [
            ChatMessage(role="user", content="I moved to Lyon last week, near the old town."),
            ChatMessage(role="assistant", content="Lyon is lovely; the old town especially."),
            ChatMessage(role="user", content="Which cafés would you try there first?"),
            ChatMessage(role="assistant", content="Start with the ones by the river Saône."),
        ]
    )
    (session,) = ns.subjects.export("user-42")["sessions"]
    assert session["session"] == "chat-1"
    assert [(m["role"], m["content"]) for m in session["messages"]] == [
        ("user", "I moved to Lyon last week, near the old town."),
        ("assistant", "Lyon is lovely; the old town especially."),
    ]
    assert [m.content for m in memory.get() if m.role.value != "system"] == [
        "Which cafés would you try there first?",
        "Start with the ones by the river Saône.",
    ]
    export = ns.subjects.export("user-42")
    assert "The user lives in Lyon." in {m["content"] for m in export["memories"]}
    text = system_text(memory.get(input="Where do I live now?"))
    assert "- The user lives in Lyon." in text
    assert "## Earlier in this conversation (summary)" in text


def test_it_leaves_out_the_summary_when_told(ns: Namespace) -> None:
    turns = [
        ChatMessage(role="user", content="I moved to Lyon last week, near the old town."),
        ChatMessage(role="assistant", content="Lyon is lovely; the old town especially."),
    ]
    asyncio.run(
        MemoryHubMemoryBlock(namespace=ns, subject="user-42").aput(turns, session_id="chat-1")
    )
    question = [ChatMessage(role="user", content="Where do I live now?")]
    summarised = MemoryHubMemoryBlock(namespace=ns, subject="user-42")
    assert "(summary)" in asyncio.run(summarised.aget(question, session_id="chat-1"))
    plain = MemoryHubMemoryBlock(namespace=ns, subject="user-42", include_summary=False)
    text = asyncio.run(plain.aget(question, session_id="chat-1"))
    assert "- The user lives in Lyon." in text
    assert "(summary)" not in text


def test_it_uses_its_own_session_over_the_memorys(ns: Namespace) -> None:
    block = MemoryHubMemoryBlock(namespace=ns, subject="user-42", session="hub-session")
    asyncio.run(block.aput([ChatMessage(role="user", content="Hello")], session_id="chat-1"))
    (session,) = ns.subjects.export("user-42")["sessions"]
    assert session["session"] == "hub-session"


def test_it_brings_nothing_of_another_namespaces_subject(
    ns: Namespace, globex_ns: Namespace
) -> None:
    ns.memories.create("Lives in Lyon", subject="user-42")
    memory = memory_with(MemoryHubMemoryBlock(namespace=globex_ns, subject="user-42"))
    assert "Lyon" not in system_text(memory.get(input="Where do I live?"))
    mine = memory_with(MemoryHubMemoryBlock(namespace=ns, subject="user-42"), session="chat-2")
    assert "Lyon" in system_text(mine.get(input="Where do I live?"))


def test_it_reads_and_writes_asynchronously(server_url: str, acme: Tenant, ns: Namespace) -> None:
    ns.memories.create("Lives in Lyon", subject="user-42")

    async def scenario() -> str:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            block = MemoryHubMemoryBlock(namespace=hub.namespace(acme.slug), subject="user-42")
            await block.aput([ChatMessage(role="user", content="Hello")], session_id="chat-1")
            return await block.aget([ChatMessage(role="user", content="Where do I live?")])

    assert "- Lives in Lyon" in asyncio.run(scenario())
    (session,) = ns.subjects.export("user-42")["sessions"]
    assert [m["content"] for m in session["messages"]] == ["Hello"]


def test_it_names_the_extra_when_llama_index_core_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for loaded in [m for m in sys.modules if m.startswith("llama_index.core.")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, "llama_index.core", None)  # None: "not installed"
    monkeypatch.delitem(sys.modules, "memoryhub_client.integrations.llama_index")
    with pytest.raises(ImportError, match=r"pip install 'memoryhub-client\[llama-index\]'"):
        importlib.import_module("memoryhub_client.integrations.llama_index")
