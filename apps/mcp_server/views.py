"""`/mcp/`: MemoryHub's MCP endpoint (Streamable HTTP, stateless, JSON answers), served by
the official `mcp` SDK's transport inside this Django view, so it runs wherever the API
runs (runserver, gunicorn). Every request must carry `Authorization: Bearer <key>`: it is
checked here first, then again by each REST call a tool makes."""

from __future__ import annotations

import threading
from collections.abc import MutableMapping
from typing import Any

from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from rest_framework import exceptions
from rest_framework.request import Request

from apps.accounts.api.authentication import ApiKeyAuthentication
from apps.mcp_server.tools import Caller, current_caller, server
from memoryhub.api.errors import error_body
from memoryhub.json_input import JsonInputError, json_loads

# The transport reads this much of a request body at most (the SDK's own limit is larger).
MAX_BODY_BYTES = 1_000_000
# JSON-RPC 2.0's codes for text that is not JSON, and for a message that is not a request.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    try:
        found = ApiKeyAuthentication().authenticate(Request(request))
    except exceptions.Throttled as refused:
        return JsonResponse(
            error_body("throttled", str(refused.detail)),
            status=429,
            headers={"Retry-After": str(int(getattr(refused, "wait", None) or 60))},
        )
    except exceptions.AuthenticationFailed as refused:
        return _unauthorized(str(refused.detail))
    if found is None:
        return _unauthorized("Send 'Authorization: Bearer <key>'.")
    if request.method != "POST":
        # Stateless and JSON-answering: no event stream to open (GET), no session to end.
        return JsonResponse(
            error_body(
                "method_not_allowed",
                f'Method "{request.method}" not allowed: send each JSON-RPC message with POST.',
            ),
            status=405,
            headers={"Allow": "POST"},
        )
    if len(request.body) > MAX_BODY_BYTES:
        return JsonResponse(error_body("body_too_large", "The request is too large."), status=413)
    refusal = jsonrpc_refusal(request.body)
    if refusal is not None:
        return JsonResponse(refusal, status=400)
    token = current_caller.set(Caller(request=request, api_key=found[0]))
    try:
        status, headers, body = async_to_sync(_serve)(_scope(request), request.body)
    finally:
        current_caller.reset(token)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() not in {"content-length", "connection", "transfer-encoding"}:
            response[name] = value
    return response


def jsonrpc_refusal(body: bytes) -> dict[str, Any] | None:
    """A JSON-RPC error for what the transport must not see or would take quietly: a body
    that the JSON guard refuses (not JSON, nested too deep, unstorable text: -32700), a
    batch (an array of messages), or a request whose id is not a string or an integer (MCP's
    rule), which it would treat as a notification and answer with an empty 202. None when
    the message may go on to the transport."""
    try:
        message = json_loads(body)
    except JsonInputError as refused:
        return {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": PARSE_ERROR, "message": f"Parse error: {refused}."},
        }
    if isinstance(message, list):
        problem = "Batch requests are not supported: send one JSON-RPC message a request."
    elif isinstance(message, dict) and "id" in message and not _is_request_id(message["id"]):
        problem = "The request's id must be a string or an integer."
    else:
        return None
    return {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": problem}}


def _is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _unauthorized(message: str) -> JsonResponse:
    return JsonResponse(
        error_body("authentication_failed", message),
        status=401,
        headers={"WWW-Authenticate": 'Bearer realm="memoryhub"'},
    )


def _scope(request: HttpRequest) -> dict[str, Any]:
    """The ASGI scope of this request, for the SDK's transport."""
    host = request.get_host()
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method or "POST",
        "scheme": request.scheme or "http",
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode(),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
            if name.lower() != "host"
        ]
        + [(b"host", host.encode("latin-1"))],
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.get_host().split(":")[0], int(request.get_port() or 80)),
        "state": {},
    }


_building = threading.Lock()


def _fresh_manager() -> StreamableHTTPSessionManager:
    """A new stateless transport manager (one serves one request: its run() is once only).
    The SDK hands it out only through the app it builds, so building and reading are one
    step. Its DNS-rebinding check stays off: Django checks the Host (ALLOWED_HOSTS), and the
    endpoint takes no cookie, only a Bearer key, which a rebound page cannot send."""
    with _building:
        server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            max_request_body_size=MAX_BODY_BYTES,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        return server.session_manager


async def _serve(scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """One request through a fresh stateless transport (each request stands alone, so any
    web worker can answer any request)."""
    manager = _fresh_manager()
    sent = False
    status = 500
    headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status = message["status"]
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return status, headers, b"".join(chunks)
