"""LlamaIndex adapters (`pip install 'memoryhub-client[llama-index]'`, llama-index-core
0.14):

- `MemoryHubRetriever`: recall as a `BaseRetriever`, one `NodeWithScore` per memory;
- `MemoryHubMemoryBlock`: a long-term block of `llama_index.core.memory.Memory`, which sends
  the turns that leave the short-term memory to MemoryHub and brings back, for the latest
  user message, the context call's instructions, recalled memories and summary.

    from memoryhub_client import MemoryHub
    from memoryhub_client.integrations.llama_index import MemoryHubRetriever

    acme = MemoryHub(url, api_key).namespace("acme")
    nodes = MemoryHubRetriever(acme, subject="user-42").retrieve("Where do I live?")
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TypedDict

from memoryhub_client.async_client import AsyncNamespace
from memoryhub_client.inputs import ContextRecallOptions, RecallOptions, Turn
from memoryhub_client.integrations._namespaces import AnyNamespace
from memoryhub_client.integrations._recall import arecall, hit_metadata, recall
from memoryhub_client.results import ContextResponse, MessageRole, RecallResponse, Strategy

if sys.version_info >= (3, 11):
    from typing import Unpack
else:
    from typing_extensions import Unpack

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.bridge.pydantic import Field
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.memory.memory import BaseMemoryBlock
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as error:
    raise ImportError(
        "memoryhub_client.integrations.llama_index needs llama-index-core, which is not "
        "installed: pip install 'memoryhub-client[llama-index]'"
    ) from error

__all__ = ["MemoryHubMemoryBlock", "MemoryHubRetriever"]

_QUERY_LENGTH = 4000  # the context call's longest query, in characters
_ROLES: dict[str, MessageRole] = {
    "user": "user",
    "assistant": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
}


class MemoryHubRetriever(BaseRetriever):
    """Recall (`Namespace.recall`) as a LlamaIndex retriever: one NodeWithScore per recalled
    memory, best first. Its score is the memory's recall score (the order MemoryHub ranked
    it in); the node is a TextNode with the memory's id and content, and in `metadata` its
    `memory_id`, `kind`, `subject`, `tags`, `score`, `relevance` (calibrated, 0..1),
    `components` (the score's parts), `recall_id` (for `Namespace.feedback`), `version`,
    `created_at`, `occurred_at`, its validity (`current`, `valid_from`, `valid_to`,
    `superseded_by`) and `memory_metadata`, none of which is shown to the LLM or
    embedded.

    The keywords after `subject` are the recall's options (`RecallOptions`: k, filters,
    include_shared, mmr, min_relevance, include_history); those left out take the server's
    defaults. `min_relevance` leaves out the memories below that relevance, so a question
    about nothing stored gets no nodes. The key needs `context` (the recall permission)."""

    def __init__(
        self,
        namespace: AnyNamespace,
        *,
        subject: str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        **options: Unpack[RecallOptions],
    ) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.namespace = namespace
        self.subject = subject
        self.options = options

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        answer = recall(
            self.namespace,
            query_bundle.query_str,
            subject=self.subject,
            options=self.options,
            call="MemoryHubRetriever.retrieve",
        )
        return _nodes(answer)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        answer = await arecall(
            self.namespace, query_bundle.query_str, subject=self.subject, options=self.options
        )
        return _nodes(answer)


def _nodes(answer: RecallResponse) -> list[NodeWithScore]:
    nodes = []
    for hit in answer.results:
        metadata = hit_metadata(hit, answer.recall_id)
        node = TextNode(
            id_=hit.memory.id,
            text=hit.memory.content,
            metadata=metadata,
            excluded_embed_metadata_keys=list(metadata),
            excluded_llm_metadata_keys=list(metadata),
        )
        nodes.append(NodeWithScore(node=node, score=hit.score))
    return nodes


class _BlockContext(TypedDict):
    subject: str
    session: str | None
    model: str | None
    max_context_tokens: int
    reserve_tokens: int
    strategy: Strategy
    buffer_tokens: int
    recall: ContextRecallOptions | None


class _BlockSend(TypedDict):
    subject: str
    session: str
    messages: list[Turn]
    extract: bool | None
    wait: bool


class MemoryHubMemoryBlock(BaseMemoryBlock[str]):
    """A long-term memory block backed by MemoryHub, for `Memory(memory_blocks=[...])`.

    `aget` (when the memory is read) asks the context call, for the latest user message,
    for what MemoryHub would put in the system message within `max_tokens` tokens of
    `model`'s tokenizer: the subject's instructions (procedural memories), the memories
    recalled for that message, the namespace's shared memories, and (unless
    `include_summary=False`) a summary of the session's turns MemoryHub holds. The turns
    themselves are left to the short-term memory. Nothing is asked without a user message.

    `aput` (when turns leave the short-term memory) sends them to the session as turns
    (`Namespace.messages`), where memories are extracted from them (`extract=False`: not;
    `wait=True`: it returns once the extraction job has finished). The session is `session`,
    or else the Memory's `session_id`.

    The key needs `context` and `memories:write`. With an AsyncNamespace, use the Memory's
    async calls (`aget`, `aput`) in one event loop; its sync calls run a loop of their own
    each time, which an AsyncMemoryHub's connections cannot follow, so give it a Namespace.
    """

    name: str = Field(default="MemoryHub", description="The name of the memory block.")
    namespace: AnyNamespace = Field(description="The MemoryHub namespace to read and write.")
    subject: str = Field(description="The person the memories are about.")
    session: str | None = Field(
        default=None, description="The MemoryHub session (None: the Memory's session_id)."
    )
    model: str | None = Field(
        default=None, description="The model whose tokenizer counts (None: the server's)."
    )
    max_tokens: int = Field(default=2000, description="The block's budget, in tokens.")
    k: int | None = Field(default=None, description="Memories recalled (None: 20).")
    include_summary: bool = Field(
        default=True, description="Whether to add a summary of the session's turns."
    )
    extract: bool | None = Field(
        default=None, description="Whether to extract memories from sent turns."
    )
    wait: bool = Field(default=False, description="Whether to wait for the extraction.")

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = _latest_user_text(messages or [])
        if not query:
            return ""
        session: str | None = self.session or block_kwargs.get("session_id")
        arguments: _BlockContext = {
            "subject": self.subject,
            "session": session if self.include_summary else None,
            "model": self.model,
            "max_context_tokens": self.max_tokens,
            "reserve_tokens": 0,
            # Every turn is "older than the buffer": summarised, never sent verbatim.
            "strategy": "summary_buffer",
            "buffer_tokens": 0,
            "recall": {"k": self.k} if self.k is not None else None,
        }
        namespace = self.namespace
        if isinstance(namespace, AsyncNamespace):
            context = await namespace.context(query, **arguments)
        else:
            sync_namespace = namespace
            context = await asyncio.to_thread(lambda: sync_namespace.context(query, **arguments))
        return _system_text(context)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        turns = _turns(messages)
        if not turns:
            return
        # Memory passes its session_id to aput, which puts it in each message.
        session = self.session or next(
            (
                str(m.additional_kwargs["session_id"])
                for m in messages
                if "session_id" in m.additional_kwargs
            ),
            None,
        )
        if not session:
            raise ValueError("MemoryHubMemoryBlock needs a session: give it one, or a Memory.")
        arguments: _BlockSend = {
            "subject": self.subject,
            "session": session,
            "messages": turns,
            "extract": self.extract,
            "wait": self.wait,
        }
        namespace = self.namespace
        if isinstance(namespace, AsyncNamespace):
            await namespace.messages(**arguments)
        else:
            sync_namespace = namespace
            await asyncio.to_thread(lambda: sync_namespace.messages(**arguments))


def _latest_user_text(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role.value == "user" and (message.content or "").strip():
            return (message.content or "")[:_QUERY_LENGTH]
    return ""


def _system_text(context: ContextResponse) -> str:
    """The assembled system message: with no turns asked for, the messages are the system
    message (if anything went in it) and the query, last."""
    if len(context.messages) > 1 and context.messages[0].role == "system":
        return context.messages[0].content
    return ""


def _turns(messages: list[ChatMessage]) -> list[Turn]:
    turns: list[Turn] = []
    for message in messages:
        text = message.content
        if not text:
            continue  # a tool call without text, an image: the server stores text turns
        role = _ROLES.get(message.role.value)
        if role is None:
            raise ValueError(f"MemoryHub cannot store a {message.role.value!r} message as a turn.")
        turns.append({"role": role, "content": text})
    return turns
