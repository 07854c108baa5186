"""The recall's options are stated once, by the recall API's serializer
(`RecallOptionsSerializer`), and every door agrees with it: the REST request, the MCP tool's
arguments, the SDK's `RecallOptions` (its clients' keywords) and the framework retrievers.
An option added in one place fails here until it is everywhere."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, Unpack, get_args, get_origin, get_type_hints

import pytest
from memoryhub_client import AsyncNamespace, Namespace, RecallOptions

from apps.mcp_server.tools import server
from apps.recall.api.serializers import RecallOptionsSerializer, RecallRequestSerializer

OPTIONS = set(RecallOptionsSerializer().fields)


def unpacked_keywords(function: Callable[..., Any]) -> Any:
    """The TypedDict a function's `**keywords: Unpack[...]` takes."""
    hints = get_type_hints(function)
    (keywords,) = (
        parameter
        for parameter in inspect.signature(function).parameters.values()
        if parameter.kind is inspect.Parameter.VAR_KEYWORD
    )
    annotation = hints[keywords.name]
    assert get_origin(annotation) is Unpack
    return get_args(annotation)[0]


def test_it_states_the_seven_options_beside_the_requests_subject_and_query() -> None:
    assert {
        "k", "filters", "include_shared", "mmr", "min_relevance", "include_history", "as_of"
    } == OPTIONS  # fmt: skip
    assert set(RecallRequestSerializer().fields) == OPTIONS | {"subject", "query"}


def test_it_gives_the_sdk_the_same_options() -> None:
    assert set(RecallOptions.__optional_keys__) == OPTIONS
    assert RecallOptions.__required_keys__ == frozenset()


@pytest.mark.parametrize("client", [Namespace, AsyncNamespace])
def test_it_gives_the_sdks_clients_the_options_as_keywords(client: type) -> None:
    assert unpacked_keywords(client.recall) is RecallOptions
    assert set(inspect.signature(client.recall).parameters) == {
        "self",
        "query",
        "subject",
        "options",
    }


@pytest.mark.parametrize(
    "module",
    ["memoryhub_client.integrations.langchain", "memoryhub_client.integrations.llama_index"],
)
def test_it_gives_the_retrievers_the_options_as_keywords(module: str) -> None:
    retriever = pytest.importorskip(module).MemoryHubRetriever
    assert unpacked_keywords(retriever.__init__) is RecallOptions


def test_it_gives_the_mcp_tool_the_options_as_arguments() -> None:
    (tool,) = [tool for tool in asyncio.run(server.list_tools()) if tool.name == "search_memories"]
    arguments = set(tool.input_schema["properties"])
    assert arguments == OPTIONS | {"query", "subject", "namespace"}
    assert tool.input_schema["required"] == ["query"]
