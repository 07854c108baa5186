"""LangChain adapters (`pip install 'memoryhub-client[langchain]'`, langchain-core 1.x):

- `MemoryHubChatMessageHistory`: a session's turns, for `RunnableWithMessageHistory` and
  anything else that takes a `BaseChatMessageHistory`;
- `MemoryHubRetriever`: recall as a `BaseRetriever`, one `Document` per memory.

    from memoryhub_client import MemoryHub
    from memoryhub_client.integrations.langchain import MemoryHubRetriever

    acme = MemoryHub(url, api_key).namespace("acme")
    docs = MemoryHubRetriever(namespace=acme, subject="user-42").invoke("Where do I live?")
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TypedDict, cast

from memoryhub_client.async_client import AsyncNamespace
from memoryhub_client.errors import UnexpectedResponse
from memoryhub_client.inputs import ContextRecallOptions, RecallOptions, SectionOverrides, Turn
from memoryhub_client.integrations._namespaces import AnyNamespace, synchronous
from memoryhub_client.integrations._recall import arecall, hit_metadata, recall
from memoryhub_client.results import ContextResponse, MessageRole, RecallResponse, Strategy

if sys.version_info >= (3, 11):
    from typing import Unpack
else:
    from typing_extensions import Unpack

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.documents import Document
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        HumanMessage,
    )
    from langchain_core.retrievers import BaseRetriever
except ImportError as error:
    raise ImportError(
        "memoryhub_client.integrations.langchain needs langchain-core, which is not "
        "installed: pip install 'memoryhub-client[langchain]'"
    ) from error

__all__ = ["MemoryHubChatMessageHistory", "MemoryHubRetriever"]

# The context call needs a query; reading a session's turns recalls nothing, so any text will
# do. Every other section of the prompt is capped at 0 tokens: only the turns come back.
_HISTORY_QUERY = "conversation history"
_TURNS_ONLY: SectionOverrides = {
    "procedural": {"max_tokens": 0},
    "memories": {"max_tokens": 0},
    "summary": {"max_tokens": 0},
    "shared": {"max_tokens": 0},
}
_NAME_LENGTH = 64  # the server's limit for a turn's name
_ROLES: dict[str, MessageRole] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
}


class _HistoryRead(TypedDict):
    subject: str
    session: str
    model: str | None
    reserve_tokens: int
    strategy: Strategy
    window: int | None
    recall: ContextRecallOptions
    sections: SectionOverrides


class MemoryHubChatMessageHistory(BaseChatMessageHistory):
    """The turns of one session of `subject`, kept by MemoryHub.

    Adding messages sends them as turns (`Namespace.messages`): they are stored when the
    call returns, and memories are extracted from them (`extract=False`: not; `wait=True`:
    the call returns once the extraction job has finished, and raises JobFailed if it
    failed). Human, AI, system and tool messages are sent with the roles user, assistant,
    system and tool; a message without text (an AI message holding only tool calls) is left
    out, as the server stores text turns only.

    `messages` reads the session back through the context call (strategy "buffer"; with
    `window`, the newest `window` turns; with `max_tokens`, the newest turns that fit that
    many tokens of `model`'s tokenizer), as HumanMessage and AIMessage in conversation order.
    The server serves a session's user and assistant turns only (the newest 1,000 at most,
    within `model`'s context window): system and tool turns are stored, and memories may be
    extracted from them, but they do not come back. A namespace that redacts personal data
    returns turns as it stored them, redacted.

    The key needs `memories:write` (to add) and `context` (to read). MemoryHub has no call
    that forgets one session, so `clear()` raises NotImplementedError; forgetting a person
    is `Namespace.subjects.erase`.
    """

    def __init__(
        self,
        namespace: AnyNamespace,
        *,
        subject: str,
        session: str,
        window: int | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
        extract: bool | None = None,
        wait: bool = False,
    ) -> None:
        super().__init__()
        self.namespace = namespace
        self.subject = subject
        self.session = session
        self.window = window
        self.max_tokens = max_tokens
        self.model = model
        self.extract = extract
        self.wait = wait

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a read, not a field
        namespace = synchronous(self.namespace, "MemoryHubChatMessageHistory.messages")
        return _history_messages(namespace.context(_HISTORY_QUERY, **self._read()))

    async def aget_messages(self) -> list[BaseMessage]:
        if not isinstance(self.namespace, AsyncNamespace):
            return await super().aget_messages()  # in a worker thread
        return _history_messages(await self.namespace.context(_HISTORY_QUERY, **self._read()))

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        turns = _turns(messages)
        if not turns:
            return
        namespace = synchronous(self.namespace, "MemoryHubChatMessageHistory.add_messages")
        namespace.messages(
            subject=self.subject,
            session=self.session,
            messages=turns,
            extract=self.extract,
            wait=self.wait,
        )

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        if not isinstance(self.namespace, AsyncNamespace):
            await super().aadd_messages(messages)  # in a worker thread
            return
        turns = _turns(messages)
        if turns:
            await self.namespace.messages(
                subject=self.subject,
                session=self.session,
                messages=turns,
                extract=self.extract,
                wait=self.wait,
            )

    def clear(self) -> None:
        raise NotImplementedError(
            "MemoryHub has no call that forgets one session's turns; "
            "Namespace.subjects.erase forgets everything about the subject."
        )

    def _read(self) -> _HistoryRead:
        sections = _TURNS_ONLY.copy()
        if self.max_tokens is not None:
            sections["turns"] = {"max_tokens": self.max_tokens}
        return {
            "subject": self.subject,
            "session": self.session,
            "model": self.model,
            "reserve_tokens": 0,
            "strategy": "buffer" if self.window is None else "window",
            "window": self.window,
            "recall": {"k": 1},
            "sections": sections,
        }


def _turns(messages: Sequence[BaseMessage]) -> list[Turn]:
    turns: list[Turn] = []
    for message in messages:
        text = message.text
        if not text:
            continue
        role = _ROLES.get(message.role if isinstance(message, ChatMessage) else message.type)
        if role is None:
            raise ValueError(f"MemoryHub cannot store a {message.type!r} message as a turn.")
        turn: Turn = {"role": role, "content": text}
        if message.name:
            turn["name"] = message.name[:_NAME_LENGTH]
        turns.append(turn)
    return turns


def _history_messages(context: ContextResponse) -> list[BaseMessage]:
    """The turns of an assembled context: the messages just before the query (its last),
    as many as its "turns" section holds."""
    section = next((s for s in context.sections if s.name == "turns"), None)
    items = section.items if section is not None else []
    turns = context.messages[len(context.messages) - 1 - len(items) : -1] if items else []
    if [item.role for item in items] != [turn.role for turn in turns]:
        raise UnexpectedResponse("The context's turns do not match its messages.")
    return [_message(turn.role, turn.content) for turn in turns]


def _message(role: str, content: str) -> BaseMessage:
    if role == "user":
        return HumanMessage(content=content)
    if role == "assistant":
        return AIMessage(content=content)
    # The server serves user and assistant turns; another role would keep its name.
    return ChatMessage(role=role, content=content)


class MemoryHubRetriever(BaseRetriever):
    """Recall (`Namespace.recall`) as a LangChain retriever: one Document per recalled
    memory, best first, its content as `page_content`, its id as `id`, and in `metadata`
    its `memory_id`, `kind`, `subject`, `tags`, `score`, `relevance` (calibrated, 0..1),
    `components` (the score's parts), `recall_id` (for `Namespace.feedback`), `version`,
    `created_at`, `occurred_at`, its validity (`current`, `valid_from`, `valid_to`,
    `superseded_by`) and `memory_metadata`.

    The keywords after `subject` are the recall's options (`RecallOptions`: k, filters,
    include_shared, mmr, min_relevance, include_history), kept in `options`; those left out
    take the server's defaults. `min_relevance` leaves out the memories below that
    relevance, so a question about nothing stored gets no documents. The key needs
    `context` (the recall permission)."""

    namespace: AnyNamespace
    subject: str | None = None
    # A RecallOptions; typed as a dict, since pydantic reads no typing.TypedDict before 3.12.
    options: dict[str, Any]

    def __init__(
        self,
        *,
        namespace: AnyNamespace,
        subject: str | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **options: Unpack[RecallOptions],
    ) -> None:
        # pydantic's __init__ takes every field; mypy reads only BaseRetriever's (tags, metadata).
        fields: dict[str, Any] = {"namespace": namespace, "subject": subject, "options": options}
        super().__init__(tags=tags, metadata=metadata, **fields)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        answer = recall(
            self.namespace,
            query,
            subject=self.subject,
            options=self._options(),
            call="MemoryHubRetriever.invoke",
        )
        return _documents(answer)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        answer = await arecall(self.namespace, query, subject=self.subject, options=self._options())
        return _documents(answer)

    def _options(self) -> RecallOptions:
        return cast(RecallOptions, self.options)


def _documents(answer: RecallResponse) -> list[Document]:
    return [
        Document(
            page_content=hit.memory.content,
            metadata=hit_metadata(hit, answer.recall_id),
            id=hit.memory.id,
        )
        for hit in answer.results
    ]
