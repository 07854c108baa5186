"""The MCP server's tools. Each mirrors one REST call (`bridge.api_call`) and answers with
that call's JSON; an API error becomes an MCP tool error carrying its code and message.

The namespace is the tool's `namespace` argument, or the key's only namespace. The subject
is the `subject` argument, or the key's default subject (set on the key's page)."""

from __future__ import annotations

import json
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from apps.accounts.models import ApiKey
from apps.mcp_server.bridge import ApiAnswer, api_call, api_path
from apps.mcp_server.parameters import request_body, with_serializer_arguments
from apps.recall.api.serializers import RecallOptionsSerializer


@dataclass(frozen=True)
class Caller:
    request: HttpRequest  # the /mcp/ request (its Authorization header authenticates)
    api_key: ApiKey


# Set by the /mcp/ view for the one request it serves; tools read it.
current_caller: ContextVar[Caller] = ContextVar("memoryhub_mcp_caller")

# What an argument that fails its schema is told, in the REST API's words (pydantic's own
# messages quote the caller's input back, at length).
ARGUMENT_ERRORS = {
    "missing": "This field is required.",
    "string_too_short": "Ensure this field has at least {min_length} characters.",
    "string_too_long": "Ensure this field has no more than {max_length} characters.",
    "greater_than_equal": "Ensure this value is greater than or equal to {ge}.",
    "less_than_equal": "Ensure this value is less than or equal to {le}.",
    "literal_error": "Not a valid choice: expected {expected}.",
    "int_parsing": "A valid integer is required.",
    "int_type": "A valid integer is required.",
    "string_type": "Not a valid string.",
    "list_type": "Expected a list of items.",
    "too_short": "Ensure this field has at least {min_length} elements.",
    "too_long": "Ensure this field has no more than {max_length} elements.",
    "float_parsing": "A valid number is required.",
    "float_type": "A valid number is required.",
    "bool_parsing": "Must be a valid boolean.",
    "bool_type": "Must be a valid boolean.",
    "datetime_from_date_parsing": "Datetime has wrong format.",
    "datetime_type": "Datetime has wrong format.",
    "dict_type": "Must be a JSON object.",
    "model_type": "Must be a JSON object.",
    "extra_forbidden": "Unknown field.",
}


def invalid_arguments(error: ValidationError) -> dict[str, list[str]]:
    """Each failing argument's name, with what is wrong with it: never the value sent."""
    details: dict[str, list[str]] = {}
    for problem in error.errors(include_input=False, include_url=False):
        name = ".".join(str(part) for part in problem["loc"]) or "arguments"
        template = ARGUMENT_ERRORS.get(problem["type"])
        try:
            text = template.format(**problem.get("ctx", {})) if template else problem["msg"]
        except (KeyError, IndexError):
            text = problem["msg"]
        details.setdefault(name, []).append(text)
    return details


def tool_error(code: str, message: str, details: dict[str, Any] | None = None) -> ToolError:
    """A tool error in the API's error shape, as one line of text."""
    suffix = f" Details: {json.dumps(details, ensure_ascii=False)}" if details else ""
    return ToolError(f"{code}: {message}{suffix}")


class MemoryHubServer(MCPServer):
    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        """The SDK's call, with arguments that fail their schema answered as the API would
        answer a field that fails validation."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as refused:
            if isinstance(refused.__cause__, ValidationError):
                raise tool_error(
                    "validation_error",
                    "The arguments are not valid.",
                    invalid_arguments(refused.__cause__),
                ) from None
            raise


server: MCPServer = MemoryHubServer(
    name="MemoryHub",
    instructions=(
        "Long-term memory about the people you talk with, stored encrypted by MemoryHub. "
        "Search before answering about a person; add what is worth remembering; delete what "
        "they ask you to forget."
    ),
)

Kind = Literal["semantic", "episodic", "procedural"]
Subject = Annotated[
    str | None,
    Field(description="Who the memory is about (the app's user id); default: the key's."),
]
Namespace = Annotated[
    str | None, Field(description="Namespace slug; default: the key's only namespace.")
]


def _namespace(caller: Caller, namespace: str | None) -> str:
    if namespace:
        return namespace
    slugs = sorted(caller.api_key.namespaces.values_list("slug", flat=True))
    if len(slugs) == 1:
        return slugs[0]
    raise ToolError(
        "This key reaches several namespaces; name one with `namespace`: " + ", ".join(slugs)
    )


def _who(subject: str | None) -> str:
    """The `subject` argument, or the key's default subject (a field of the key, already
    read: no query, so safe on the event loop)."""
    chosen = (subject or "").strip() or current_caller.get().api_key.default_subject
    if not chosen:
        raise ToolError("Name the person with `subject`: this key has no default subject.")
    return chosen


def _answer(answer: ApiAnswer) -> Any:
    if answer.ok:
        return answer.body
    error = answer.error
    raise tool_error(
        f"{error.get('code')} (HTTP {answer.status})",
        str(error.get("message")),
        error.get("details") or None,
    )


def _call(method: str, namespace: str | None, *parts: str, **kwargs: Any) -> Any:
    caller = current_caller.get()
    path = api_path(_namespace(caller, namespace), *parts)
    return _answer(api_call(caller.request, method, path, **kwargs))


# Django's ORM may not run on the event loop: each tool's work runs on the request's thread.
def _in_request_thread(method: str, namespace: str | None, *parts: str, **kwargs: Any) -> Any:
    return sync_to_async(_call, thread_sensitive=True)(method, namespace, *parts, **kwargs)


@server.tool(description="Remember something about a person (a fact, an event, an instruction).")
async def add_memory(
    content: Annotated[str, Field(min_length=1, max_length=32_000)],
    subject: Subject = None,
    kind: Kind | None = None,
    tags: list[str] | None = None,
    namespace: Namespace = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"subject": _who(subject), "content": content}
    if kind is not None:
        body["kind"] = kind
    if tags is not None:
        body["tags"] = tags
    memory: dict[str, Any] = await _in_request_thread("POST", namespace, "memories", body=body)
    return memory


@server.tool(
    description="The memories about a person most relevant to a query, best first, each with "
    "its score components (vector, keyword, recency, importance) and relevance."
)
@with_serializer_arguments(RecallOptionsSerializer())
async def search_memories(
    query: Annotated[str, Field(min_length=1, max_length=4000)],
    subject: Subject = None,
    namespace: Namespace = None,
    **options: Any,
) -> dict[str, Any]:
    # The recall's options are the recall API's own (k, filters, include_shared, …).
    body = {"subject": _who(subject), "query": query, **request_body(options)}
    found: dict[str, Any] = await _in_request_thread("POST", namespace, "recall", body=body)
    return found


@server.tool(description="A person's memories, newest first, a page at a time.")
async def list_memories(
    subject: Subject = None,
    kind: Kind | None = None,
    page_size: Annotated[int, Field(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Field(description="`next` of the previous page")] = None,
    namespace: Namespace = None,
) -> dict[str, Any]:
    query = {"subject": _who(subject), "kind": kind, "page_size": page_size, "cursor": cursor}
    page: dict[str, Any] = await _in_request_thread("GET", namespace, "memories", query=query)
    return page


@server.tool(description="Delete one memory (by its id) for good.")
async def delete_memory(
    memory_id: Annotated[str, Field(min_length=1, max_length=64)],
    namespace: Namespace = None,
) -> dict[str, Any]:
    await _in_request_thread("DELETE", namespace, "memories", memory_id)
    return {"deleted": memory_id}


@server.tool(
    description="A token-budgeted prompt for a model: instructions, the person's relevant "
    "memories and the session's conversation, as chat messages with token counts."
)
async def get_context(
    query: Annotated[str, Field(min_length=1, max_length=4000)],
    subject: Subject = None,
    session: Annotated[str | None, Field(max_length=200)] = None,
    model: Annotated[str | None, Field(max_length=100)] = None,
    max_context_tokens: Annotated[int | None, Field(ge=1)] = None,
    namespace: Namespace = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"subject": _who(subject), "query": query, "session": session}
    if model:
        body["model"] = model
    if max_context_tokens is not None:
        body["max_context_tokens"] = max_context_tokens
    assembled: dict[str, Any] = await _in_request_thread("POST", namespace, "context", body=body)
    return assembled


@server.tool(
    description="Erase everything remembered about a person (crypto-shredded, not undoable). "
    "Needs the subjects:admin permission, and `confirm` set to the subject's id."
)
async def forget_me(
    confirm: Annotated[str, Field(description="The subject's id again, to confirm.")],
    subject: Subject = None,
    namespace: Namespace = None,
) -> dict[str, Any]:
    who = _who(subject)
    if confirm != who:
        raise ToolError("Not erased: `confirm` must be the subject's id, exactly.")
    receipt: dict[str, Any] = await _in_request_thread("POST", namespace, "subjects", who, "erase")
    return receipt
