"""The SDK's LangChain adapters (memoryhub_client.integrations.langchain) against the live
server: the chat message history of a session, and the retriever over recall."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import sys

import pytest
from memoryhub_client import AsyncMemoryHub, MemoryHub, Namespace, NotFound, RecallComponents

from tests.conftest import Tenant

pytest.importorskip("langchain_core", reason="the SDK's langchain extra is not installed")

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory
from memoryhub_client.integrations.langchain import (
    MemoryHubChatMessageHistory,
    MemoryHubRetriever,
)


def contents(messages: list) -> list[tuple[str, str]]:
    return [(message.type, message.content) for message in messages]


# --- The chat message history ---------------------------------------------------------------


def test_it_reads_back_the_turns_it_added_in_order(ns: Namespace) -> None:
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")
    assert history.messages == []
    history.add_messages(
        [HumanMessage("I moved to Lyon last week."), AIMessage("Lyon is lovely in spring.")]
    )
    history.add_user_message("Any good cafés?")
    assert contents(history.messages) == [
        ("human", "I moved to Lyon last week."),
        ("ai", "Lyon is lovely in spring."),
        ("human", "Any good cafés?"),
    ]


def test_it_extracts_memories_from_the_turns_it_adds(ns: Namespace) -> None:
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1", wait=True)
    history.add_user_message("I live in Oslo.")
    export = ns.subjects.export("user-42")
    assert "The user lives in Oslo." in {memory["content"] for memory in export["memories"]}


def test_it_adds_turns_without_extraction_when_told(ns: Namespace) -> None:
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1", extract=False)
    history.add_user_message("I live in Oslo.")
    assert contents(history.messages) == [("human", "I live in Oslo.")]
    assert ns.subjects.export("user-42")["memories"] == []


def test_it_keeps_each_session_to_itself(ns: Namespace) -> None:
    first = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")
    second = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-2")
    first.add_user_message("About the trip to Rome.")
    second.add_user_message("About the tax return.")
    assert contents(first.messages) == [("human", "About the trip to Rome.")]
    assert contents(second.messages) == [("human", "About the tax return.")]


def test_it_reads_the_newest_turns_of_a_window(ns: Namespace) -> None:
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1", window=2)
    history.add_messages([HumanMessage(f"Turn number {i}") for i in range(5)])
    assert contents(history.messages) == [("human", "Turn number 3"), ("human", "Turn number 4")]


def test_it_reads_the_newest_turns_that_fit_max_tokens(ns: Namespace) -> None:
    everything = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")
    everything.add_messages([HumanMessage(f"Turn number {i} " + "word " * 20) for i in range(6)])
    capped = MemoryHubChatMessageHistory(
        ns, subject="user-42", session="chat-1", max_tokens=60, model="gpt-4o"
    )
    newest = capped.messages
    assert 0 < len(newest) < 6
    assert newest == everything.messages[-len(newest) :]


def test_it_stores_system_turns_but_reads_back_user_and_assistant_ones(ns: Namespace) -> None:
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")
    history.add_messages([SystemMessage("Be brief."), HumanMessage("Hello"), AIMessage("Hi")])
    assert contents(history.messages) == [("human", "Hello"), ("ai", "Hi")]
    (session,) = ns.subjects.export("user-42")["sessions"]
    assert [m["role"] for m in session["messages"]] == ["system", "user", "assistant"]


def test_it_leaves_out_messages_without_text(ns: Namespace) -> None:
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")
    tool_call = {"name": "weather", "args": {"city": "Lyon"}, "id": "call-1"}
    history.add_messages([AIMessage(content="", tool_calls=[tool_call])])
    assert list(ns.audit(action="messages.ingest")) == []
    history.add_messages([HumanMessage("Weather?"), AIMessage(content="", tool_calls=[tool_call])])
    assert contents(history.messages) == [("human", "Weather?")]
    (ingest,) = ns.audit(action="messages.ingest")
    assert ingest.details["received"] == 1


def test_it_refuses_to_clear_a_session(ns: Namespace) -> None:
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")
    history.add_user_message("Keep this.")
    with pytest.raises(NotImplementedError, match=r"subjects\.erase"):
        history.clear()
    assert contents(history.messages) == [("human", "Keep this.")]


# langchain-core 1.x deprecates RunnableWithMessageHistory (for LangGraph's persistence) but
# keeps it: it is still the chain that takes a BaseChatMessageHistory.
@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")
def test_it_keeps_the_history_of_a_runnable(ns: Namespace) -> None:
    prompt = ChatPromptTemplate.from_messages(
        [MessagesPlaceholder("history"), ("human", "{question}")]
    )
    chain = prompt | FakeListChatModel(responses=["Noted: Lyon.", "You live in Lyon."])
    with_history = RunnableWithMessageHistory(
        chain,
        lambda session_id: MemoryHubChatMessageHistory(ns, subject="user-42", session=session_id),
        input_messages_key="question",
        history_messages_key="history",
    )
    config = {"configurable": {"session_id": "chat-1"}}
    with_history.invoke({"question": "I live in Lyon."}, config=config)
    answer = with_history.invoke({"question": "Where do I live?"}, config=config)
    assert answer.content == "You live in Lyon."
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")
    assert contents(history.messages) == [
        ("human", "I live in Lyon."),
        ("ai", "Noted: Lyon."),
        ("human", "Where do I live?"),
        ("ai", "You live in Lyon."),
    ]


def test_it_shows_another_namespace_none_of_the_turns(
    ns: Namespace, globex_ns: Namespace, server_url: str, globex: Tenant, acme: Tenant
) -> None:
    mine = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")
    mine.add_user_message("A secret of acme's user.")
    outsider = MemoryHubChatMessageHistory(globex_ns, subject="user-42", session="chat-1")
    assert outsider.messages == []
    with MemoryHub(server_url, globex.raw_key) as hub:
        trespasser = MemoryHubChatMessageHistory(
            hub.namespace(acme.slug), subject="user-42", session="chat-1"
        )
        with pytest.raises(NotFound):
            _ = trespasser.messages
        with pytest.raises(NotFound):
            trespasser.add_user_message("Planted.")
    assert contents(mine.messages) == [("human", "A secret of acme's user.")]


def test_it_adds_and_reads_turns_asynchronously(server_url: str, acme: Tenant) -> None:
    async def scenario() -> list[tuple[str, str]]:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            history = MemoryHubChatMessageHistory(
                hub.namespace(acme.slug), subject="user-42", session="chat-1"
            )
            await history.aadd_messages([HumanMessage("Hello"), AIMessage("Hi there")])
            return contents(await history.aget_messages())

    assert asyncio.run(scenario()) == [("human", "Hello"), ("ai", "Hi there")]


def test_it_runs_the_async_calls_of_a_sync_namespace_in_a_thread(ns: Namespace) -> None:
    history = MemoryHubChatMessageHistory(ns, subject="user-42", session="chat-1")

    async def scenario() -> list[tuple[str, str]]:
        await history.aadd_messages([HumanMessage("Hello")])
        return contents(await history.aget_messages())

    assert asyncio.run(scenario()) == [("human", "Hello")]


def test_it_refuses_sync_calls_on_an_async_namespace(server_url: str, acme: Tenant) -> None:
    async def scenario() -> None:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            namespace = hub.namespace(acme.slug)
            history = MemoryHubChatMessageHistory(namespace, subject="user-42", session="c")
            with pytest.raises(TypeError, match="AsyncNamespace"):
                history.add_user_message("Hello")
            with pytest.raises(TypeError, match="AsyncNamespace"):
                _ = history.messages
            with pytest.raises(TypeError, match="AsyncNamespace"):
                MemoryHubRetriever(namespace=namespace).invoke("Hello")

    asyncio.run(scenario())


# --- The retriever ----------------------------------------------------------------------------


def test_it_retrieves_the_stored_memory_with_its_metadata(ns: Namespace) -> None:
    tea = ns.memories.create("Likes green tea in the morning", subject="user-42", tags=["food"])
    ns.memories.create("Plays tennis on Sundays", subject="user-42")
    documents = MemoryHubRetriever(namespace=ns, subject="user-42").invoke("green tea")
    top = documents[0]
    assert isinstance(top, Document)
    assert (top.id, top.page_content) == (tea.id, "Likes green tea in the morning")
    metadata = top.metadata
    assert metadata["memory_id"] == tea.id
    assert (metadata["kind"], metadata["subject"], metadata["tags"]) == (
        "semantic",
        "user-42",
        ["food"],
    )
    assert set(metadata["components"]) == {f.name for f in dataclasses.fields(RecallComponents)}
    assert metadata["components"]["vector"] > 0
    assert metadata["score"] == max(d.metadata["score"] for d in documents)
    assert 0 <= metadata["relevance"] <= 1
    assert metadata["relevance"] == metadata["components"]["relevance"]
    assert metadata["created_at"] == tea.created_at.isoformat()
    feedback = ns.feedback(metadata["recall_id"], memory_id=metadata["memory_id"], relevant=True)
    assert feedback.memory_id == tea.id


def test_it_passes_its_recall_options(ns: Namespace) -> None:
    ns.memories.create("Drinks tea", subject="user-42", tags=["drinks"])
    plans = ns.memories.create("Tea ceremony class on Friday", subject="user-42", tags=["plans"])
    one = MemoryHubRetriever(namespace=ns, subject="user-42", k=1).invoke("tea")
    assert len(one) == 1
    filtered = MemoryHubRetriever(
        namespace=ns, subject="user-42", filters={"tags": ["plans"]}
    ).invoke("tea")
    assert [document.id for document in filtered] == [plans.id]
    assert (
        MemoryHubRetriever(namespace=ns, subject="user-42", min_relevance=1.0).invoke("tea") == []
    )
    shared = ns.memories.create("The café serves tea until noon", subject=None)
    every = MemoryHubRetriever(namespace=ns, subject="user-42").invoke("tea")
    assert shared.id in [document.id for document in every]
    retriever = MemoryHubRetriever(namespace=ns, subject="user-42", include_shared=False)
    assert retriever.options == {"include_shared": False}
    own = retriever.invoke("tea")
    assert shared.id not in [document.id for document in own]
    assert len(own) == len(every) - 1


def test_it_retrieves_nothing_of_another_namespaces_subject(
    ns: Namespace, globex_ns: Namespace, server_url: str, globex: Tenant, acme: Tenant
) -> None:
    ns.memories.create("Likes green tea", subject="user-42")
    assert MemoryHubRetriever(namespace=globex_ns, subject="user-42").invoke("green tea") == []
    with MemoryHub(server_url, globex.raw_key) as hub:
        trespasser = MemoryHubRetriever(namespace=hub.namespace(acme.slug), subject="user-42")
        with pytest.raises(NotFound):
            trespasser.invoke("green tea")
    assert len(MemoryHubRetriever(namespace=ns, subject="user-42").invoke("green tea")) == 1


def test_it_retrieves_asynchronously(server_url: str, acme: Tenant, ns: Namespace) -> None:
    tea = ns.memories.create("Likes green tea", subject="user-42")

    async def scenario() -> tuple[list[Document], list[Document]]:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            retriever = MemoryHubRetriever(namespace=hub.namespace(acme.slug), subject="user-42")
            native = await retriever.ainvoke("green tea")
        threaded = await MemoryHubRetriever(namespace=ns, subject="user-42").ainvoke("green tea")
        return native, threaded

    native, threaded = asyncio.run(scenario())
    assert [d.id for d in native] == [d.id for d in threaded] == [tea.id]
    assert native[0].metadata["kind"] == "semantic"


def test_it_names_the_extra_when_langchain_core_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for loaded in [m for m in sys.modules if m.startswith("langchain_core.")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, "langchain_core", None)  # None: "not installed"
    monkeypatch.delitem(sys.modules, "memoryhub_client.integrations.langchain")
    with pytest.raises(ImportError, match=r"pip install 'memoryhub-client\[langchain\]'"):
        importlib.import_module("memoryhub_client.integrations.langchain")
