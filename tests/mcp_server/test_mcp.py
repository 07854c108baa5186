"""The MCP endpoint, driven by the official `mcp` SDK's client over Streamable HTTP against a
live server: the tools, their scope (a key of one namespace cannot reach another), their
errors (MCP tool errors, never a crash), and their audit (as the REST call they mirror)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from apps.accounts.models import ApiKey, Permission
from apps.audit.models import AuditEvent
from apps.memories.models import Memory, Subject
from tests.conftest import Tenant, make_api_key

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {
    "add_memory",
    "search_memories",
    "list_memories",
    "delete_memory",
    "get_context",
    "forget_me",
}


def session(live_server: Any, raw_key: str, work: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run `work` in an MCP client session with the key, and return what it returns."""

    async def main() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw_key}"}, timeout=30)
        async with (
            http,
            Client(streamable_http_client(f"{live_server.url}/mcp/", http_client=http)) as client,
        ):
            return await work(client)

    return asyncio.run(main())


def payload(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content or json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert result.is_error
    return " ".join(block.text for block in result.content)


def test_it_lists_adds_searches_and_deletes(acme: Tenant, live_server: Any) -> None:
    async def work(client: Client) -> dict[str, Any]:
        listed = await client.list_tools()
        added = payload(
            await client.call_tool(
                "add_memory",
                {"content": "Mei is allergic to shellfish", "subject": "mei", "tags": ["health"]},
            )
        )
        found = payload(
            await client.call_tool(
                "search_memories", {"query": "shellfish allergy", "subject": "mei"}
            )
        )
        page = payload(await client.call_tool("list_memories", {"subject": "mei"}))
        deleted = payload(await client.call_tool("delete_memory", {"memory_id": added["id"]}))
        after = payload(await client.call_tool("list_memories", {"subject": "mei"}))
        return {
            "tools": {tool.name for tool in listed.tools},
            "added": added,
            "found": found,
            "page": page,
            "deleted": deleted,
            "after": after,
        }

    out = session(live_server, acme.raw_key, work)
    assert out["tools"] == TOOLS
    assert out["added"]["content"] == "Mei is allergic to shellfish"
    assert out["added"]["tags"] == ["health"]
    first = out["found"]["results"][0]
    assert first["memory"]["id"] == out["added"]["id"]
    assert {"vector", "keyword", "recency", "importance"} <= set(first["components"])
    assert out["found"]["recall_id"]
    assert [m["id"] for m in out["page"]["results"]] == [out["added"]["id"]]
    assert out["deleted"] == {"deleted": out["added"]["id"]}
    assert out["after"]["results"] == []
    assert not Memory.objects.filter(pk=out["added"]["id"]).exists()
    # Audited as the REST calls they mirror, by the key.
    events = AuditEvent.objects.filter(namespace_id=acme.namespace.pk, action__startswith="memory.")
    actions = list(events.order_by("id").values_list("action", "actor_id"))
    prefix = ApiKey.objects.get(namespaces=acme.namespace).prefix
    assert ("memory.create", prefix) in actions
    assert ("memory.delete", prefix) in actions


def test_a_key_of_one_namespace_cannot_touch_another(
    acme: Tenant, globex: Tenant, live_server: Any
) -> None:
    theirs = globex.client.post(
        globex.url("memories"), {"subject": "bob", "content": "Bob's secret"}, format="json"
    ).json()["id"]

    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool(
                "add_memory", {"content": "x", "subject": "bob", "namespace": globex.slug}
            ),
            await client.call_tool(
                "search_memories", {"query": "secret", "subject": "bob", "namespace": globex.slug}
            ),
            await client.call_tool("list_memories", {"subject": "bob", "namespace": globex.slug}),
            await client.call_tool("delete_memory", {"memory_id": theirs}),
            await client.call_tool(
                "delete_memory", {"memory_id": theirs, "namespace": globex.slug}
            ),
            await client.call_tool(
                "get_context", {"query": "secret", "subject": "bob", "namespace": globex.slug}
            ),
            await client.call_tool(
                "forget_me", {"subject": "bob", "confirm": "bob", "namespace": globex.slug}
            ),
        ]

    results = session(live_server, acme.raw_key, work)
    for result in results:
        assert "not_found" in error_text(result)
    assert Memory.objects.filter(pk=theirs).exists()
    assert Subject.objects.filter(namespace=globex.namespace, external_id="bob").exists()
    assert not Memory.objects.filter(namespace=globex.namespace).exclude(pk=theirs).exists()


def test_bad_arguments_are_tool_errors_and_nothing_is_written(
    acme: Tenant, live_server: Any
) -> None:
    async def work(client: Client) -> dict[str, Any]:
        return {
            "no content": await client.call_tool("add_memory", {"subject": "mei"}),
            "empty content": await client.call_tool(
                "add_memory", {"content": "", "subject": "mei"}
            ),
            "bad kind": await client.call_tool(
                "add_memory", {"content": "x", "subject": "mei", "kind": "gossip"}
            ),
            "k too big": await client.call_tool(
                "search_memories", {"query": "x", "subject": "mei", "k": 1000}
            ),
            "no subject": await client.call_tool("add_memory", {"content": "x"}),
            "not an id": await client.call_tool("delete_memory", {"memory_id": "not-a-uuid"}),
            "wrong confirmation": await client.call_tool(
                "forget_me", {"subject": "mei", "confirm": "someone else"}
            ),
            "unknown tool": await client.call_tool("drop_tables", {}),
            "still alive": await client.call_tool("list_memories", {"subject": "mei"}),
        }

    out = session(live_server, acme.raw_key, work)
    for name in ("no content", "empty content", "bad kind", "k too big", "unknown tool"):
        assert out[name].is_error, name
    assert "subject" in error_text(out["no subject"])
    assert "not_found" in error_text(out["not an id"])
    assert "Not erased" in error_text(out["wrong confirmation"])
    assert payload(out["still alive"])["results"] == []
    assert not Memory.objects.exists()


def test_search_memories_passes_the_recall_options_on(acme: Tenant, live_server: Any) -> None:
    def create(content: str, subject: str | None, tags: list[str]) -> str:
        body = {"subject": subject, "content": content, "tags": tags}
        return str(acme.client.post(acme.url("memories"), body, format="json").json()["id"])

    drinks = create("Mei drinks oolong tea", "mei", ["drinks"])
    plans = create("Mei has a tea ceremony on Friday", "mei", ["plans"])
    shared = create("The café serves tea until noon", None, [])
    search = {"query": "tea", "subject": "mei"}

    async def work(client: Client) -> dict[str, Any]:
        return {
            "default": await client.call_tool("search_memories", search),
            "k": await client.call_tool("search_memories", {**search, "k": 1}),
            "filters": await client.call_tool(
                "search_memories", {**search, "filters": {"tags": ["plans"]}}
            ),
            "own": await client.call_tool("search_memories", {**search, "include_shared": False}),
            "abstain": await client.call_tool("search_memories", {**search, "min_relevance": 1.0}),
            "mmr": await client.call_tool("search_memories", {**search, "mmr": 0.5}),
            "history": await client.call_tool(
                "search_memories", {**search, "include_history": True}
            ),
            "bad filter": await client.call_tool(
                "search_memories", {**search, "filters": {"kind": ["gossip"], "colour": "red"}}
            ),
        }

    out = session(live_server, acme.raw_key, work)

    def found(name: str) -> set[str]:
        return {hit["memory"]["id"] for hit in payload(out[name])["results"]}

    assert found("default") == found("mmr") == found("history") == {drinks, plans, shared}
    assert len(found("k")) == 1
    assert found("filters") == {plans}
    assert found("own") == {drinks, plans}
    assert found("abstain") == set()
    text = error_text(out["bad filter"])
    assert '"filters.kind.0": ["Not a valid choice: expected' in text
    assert '"filters.colour": ["Unknown field."]' in text


def test_forget_me_needs_the_admin_permission_and_the_confirmation(
    acme: Tenant, live_server: Any
) -> None:
    acme.client.post(acme.url("memories"), {"subject": "mei", "content": "Tea"}, format="json")
    writer = make_api_key([acme.namespace], [Permission.MEMORIES_WRITE, Permission.MEMORIES_READ])

    async def refused(client: Client) -> Any:
        return await client.call_tool("forget_me", {"subject": "mei", "confirm": "mei"})

    assert "permission" in error_text(session(live_server, writer, refused))
    assert Subject.objects.filter(external_id="mei").exists()

    receipt = payload(session(live_server, acme.raw_key, refused))
    assert receipt["memories_deleted"] == 1
    assert receipt["data_keys_destroyed"] == 1
    assert not Subject.objects.filter(external_id="mei").exists()
    assert AuditEvent.objects.filter(action="subject.erase", outcome="success").count() == 1


def test_a_key_s_default_subject_serves_calls_that_name_none(
    acme: Tenant, live_server: Any
) -> None:
    ApiKey.objects.filter(namespaces=acme.namespace).update(default_subject="mei")

    async def work(client: Client) -> Any:
        await client.call_tool("add_memory", {"content": "Mei drinks oolong"})
        return await client.call_tool("search_memories", {"query": "oolong"})

    found = payload(session(live_server, acme.raw_key, work))
    assert found["results"][0]["memory"]["subject"] == "mei"
    assert Memory.objects.get().subject.external_id == "mei"


def test_the_endpoint_needs_a_key(acme: Tenant, live_server: Any) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    missing = httpx.post(f"{live_server.url}/mcp/", json=body, headers=headers)
    wrong = httpx.post(
        f"{live_server.url}/mcp/",
        json=body,
        headers={**headers, "Authorization": "Bearer mh_000000000000_nope"},
    )
    for response in (missing, wrong):
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "authentication_failed"
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_memoryhub_mcp_relays_stdio_to_the_server(acme: Tenant, live_server: Any) -> None:
    """A desktop client's set-up: it launches `memoryhub mcp` and speaks MCP over stdio."""
    command = Path(sys.executable).with_name("memoryhub")
    server = StdioServerParameters(
        command=str(command),
        args=["mcp", "--url", live_server.url],
        env={"MEMORYHUB_API_KEY": acme.raw_key},
    )

    async def main() -> tuple[set[str], Any, Any]:
        async with Client(server) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            added = await client.call_tool("add_memory", {"content": "Oolong", "subject": "mei"})
            refused = await client.call_tool("delete_memory", {"memory_id": "nope"})
            return tools, added, refused

    tools, added, refused = asyncio.run(main())
    assert tools == TOOLS
    assert Memory.objects.get(pk=payload(added)["id"]).subject.external_id == "mei"
    assert "not_found" in error_text(refused)


def test_memoryhub_mcp_says_so_when_the_key_is_refused(live_server: Any) -> None:
    from memoryhub.mcp_stdio import serve

    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    out = io.StringIO()
    serve(live_server.url, "mh_000000000000_wrong", io.StringIO(json.dumps(request) + "\n"), out)
    reply = json.loads(out.getvalue())
    assert reply["id"] == 7
    assert "401" in reply["error"]["message"]


def test_argument_errors_name_the_argument_and_never_echo_it(
    acme: Tenant, live_server: Any
) -> None:
    marker = "ECHO-" + "m" * 32_010  # longer than add_memory takes

    async def work(client: Client) -> dict[str, Any]:
        return {
            "too long": await client.call_tool("add_memory", {"content": marker, "subject": "mei"}),
            "bad kind": await client.call_tool(
                "add_memory", {"content": "x", "subject": "mei", "kind": "ECHO-gossip"}
            ),
            "k too big": await client.call_tool(
                "search_memories", {"query": "x", "subject": "mei", "k": 1000}
            ),
            "missing": await client.call_tool("search_memories", {"subject": "mei"}),
        }

    out = session(live_server, acme.raw_key, work)
    texts = {name: error_text(result) for name, result in out.items()}
    for name, text in texts.items():
        assert text.startswith("validation_error: The arguments are not valid."), name
        for echoed in ("ECHO-", "input_value", "http"):
            assert echoed not in text, name
        assert len(text) < 300, name
    assert (
        '"content": ["Ensure this field has no more than 32000 characters."]' in texts["too long"]
    )
    assert '"kind": ["Not a valid choice: expected' in texts["bad kind"]
    assert '"k": ["Ensure this value is less than or equal to 100."]' in texts["k too big"]
    assert '"query": ["This field is required."]' in texts["missing"]
    assert not Memory.objects.exists()


MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_get_is_405_with_allow(acme: Tenant, live_server: Any) -> None:
    response = httpx.get(
        f"{live_server.url}/mcp/",
        headers={**MCP_HEADERS, "Authorization": f"Bearer {acme.raw_key}"},
    )
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    ("message", "says"),
    [
        (
            [{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}],
            "Batch requests are not supported",
        ),
        (
            {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list", "params": {}},
            "id must be a string or an integer",
        ),
        (
            {"jsonrpc": "2.0", "id": [1], "method": "tools/list", "params": {}},
            "id must be a string or an integer",
        ),
        (
            {"jsonrpc": "2.0", "id": None, "method": "tools/list", "params": {}},
            "id must be a string or an integer",
        ),
    ],
    ids=["batch", "object id", "array id", "null id"],
)
def test_a_batch_or_a_non_scalar_id_is_refused_clearly(
    acme: Tenant, live_server: Any, message: Any, says: str
) -> None:
    response = httpx.post(
        f"{live_server.url}/mcp/",
        json=message,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {acme.raw_key}"},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600
    assert says in error["message"]


def _deep_call(where: str, depth: int) -> str:
    """A tools/call whose `where` (its arguments, an unknown argument, or `params._meta`)
    holds arrays nested `depth` levels deep, as raw JSON text."""
    deep = "[" * depth + "]" * depth
    if where == "arguments":
        params = f'{{"name": "add_memory", "arguments": {deep}}}'
    elif where == "unknown argument":
        params = f'{{"name": "add_memory", "arguments": {{"content": "x", "colour": {deep}}}}}'
    else:
        params = f'{{"name": "add_memory", "arguments": {{"content": "x"}}, "_meta": {deep}}}'
    return f'{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {params}}}'


@pytest.mark.parametrize("depth", [5_000, 20_000, 400_000])
@pytest.mark.parametrize("where", ["arguments", "unknown argument", "params._meta"])
def test_a_deeply_nested_body_is_a_parse_error_and_writes_nothing(
    acme: Tenant, live_server: Any, caplog: pytest.LogCaptureFixture, where: str, depth: int
) -> None:
    events = AuditEvent.objects.count()
    response = httpx.post(
        f"{live_server.url}/mcp/",
        content=_deep_call(where, depth).encode(),
        headers={**MCP_HEADERS, "Content-Type": "application/json",
                 "Authorization": f"Bearer {acme.raw_key}"},
    )  # fmt: skip
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error == {"code": -32700, "message": "Parse error: nested deeper than 64 levels."}
    assert not [record for record in caplog.records if record.levelname in {"ERROR", "CRITICAL"}]
    assert not Memory.objects.exists()
    assert AuditEvent.objects.count() == events


def test_a_body_at_the_depth_limit_still_works(acme: Tenant, live_server: Any) -> None:
    # The body (1), params (2) and _meta (3) are three levels; 61 arrays make 64, 62 make 65.
    def call(arrays: int) -> httpx.Response:
        meta = {"trace": json.loads("[" * arrays + "]" * arrays)}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
        return httpx.post(
            f"{live_server.url}/mcp/",
            json=body,
            headers={**MCP_HEADERS, "Authorization": f"Bearer {acme.raw_key}"},
        )

    at_limit = call(61)
    assert at_limit.status_code == 200
    assert {tool["name"] for tool in at_limit.json()["result"]["tools"]} == TOOLS
    over = call(62)
    assert over.status_code == 400
    assert over.json()["error"]["code"] == -32700


def test_the_stdio_relay_refuses_a_deep_line_without_sending_it(
    acme: Tenant, live_server: Any
) -> None:
    from memoryhub.mcp_stdio import serve

    line = _deep_call("arguments", 400_000)
    out = io.StringIO()
    serve(live_server.url, acme.raw_key, io.StringIO(line + "\n"), out)
    reply = json.loads(out.getvalue())
    assert reply["id"] is None
    assert reply["error"] == {
        "code": -32700,
        "message": "Parse error: nested deeper than 64 levels.",
    }
    assert not Memory.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="memory.").exists()


def test_the_stdio_relay_says_which_line_is_not_json(acme: Tenant, live_server: Any) -> None:
    from memoryhub.mcp_stdio import serve

    out = io.StringIO()
    serve(live_server.url, acme.raw_key, io.StringIO("{not json\n"), out)
    error = json.loads(out.getvalue())["error"]
    assert error["code"] == -32700
    assert error["message"].startswith("Parse error: not JSON (")
