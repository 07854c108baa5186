"""`memoryhub mcp`: MemoryHub's MCP tools for desktop clients that speak MCP over stdio only.

It relays, one message at a time, between stdio (MCP's newline-delimited JSON-RPC) and a
running MemoryHub's `/mcp/` endpoint (Streamable HTTP, stateless), with the API key as its
Bearer credential. It holds no state and touches no database: the server does the work,
scoping and audit.

    memoryhub mcp --url http://127.0.0.1:8000 [--api-key mh_…]   (or MEMORYHUB_API_KEY)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, Any

import httpx

from memoryhub.json_input import MAX_DEPTH, JsonInputError, json_loads

ACCEPT = "application/json, text/event-stream"
REPLY_MAX_DEPTH = 4 * MAX_DEPTH


def _error(message_id: Any, code: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}}


def relay(line: str, http: httpx.Client, endpoint: str) -> list[dict[str, Any]]:
    """The replies to one stdio line (none for a notification or a reply of the client's)."""
    try:
        message = json_loads(line)
    except JsonInputError as refused:
        return [_error(None, -32700, f"Parse error: {refused}.")]
    message_id = message.get("id") if isinstance(message, dict) else None
    try:
        response = http.post(endpoint, content=line.encode(), headers={"Accept": ACCEPT})
    except httpx.HTTPError as failure:
        text = f"MemoryHub is unreachable at {endpoint}: {type(failure).__name__}."
        return [_error(message_id, -32603, text)] if message_id is not None else []
    if response.status_code == 202 or not response.content:
        return []
    try:
        # The server's reply may carry a memory's metadata (itself up to MAX_DEPTH deep)
        # inside a result: bounded too, with room for that.
        body = json_loads(response.content, max_depth=REPLY_MAX_DEPTH)
    except JsonInputError:
        body = None
    if response.is_success and isinstance(body, dict | list):
        return body if isinstance(body, list) else [body]
    # The API's own error shape (401, 429, …): said to the client as a JSON-RPC error.
    detail = body.get("error", {}).get("message") if isinstance(body, dict) else None
    text = f"MemoryHub answered HTTP {response.status_code}: {detail or response.reason_phrase}"
    return [_error(message_id, -32000, text)] if message_id is not None else []


def serve(url: str, api_key: str, stdin: IO[str], stdout: IO[str]) -> None:
    endpoint = url.rstrip("/") + "/mcp/"
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    with httpx.Client(headers=headers, timeout=60) as http:
        for line in stdin:
            if not line.strip():
                continue
            for reply in relay(line, http, endpoint):
                stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
                stdout.flush()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="memoryhub mcp", description=__doc__.split("\n")[0])
    parser.add_argument("--url", default=os.environ.get("MEMORYHUB_URL", "http://127.0.0.1:8000"))
    parser.add_argument(
        "--api-key",
        default=os.environ.get("MEMORYHUB_API_KEY", ""),
        help="the key (default: $MEMORYHUB_API_KEY, which keeps it out of process listings)",
    )
    options = parser.parse_args(argv)
    if not options.api_key:
        parser.error("an API key is needed: --api-key or MEMORYHUB_API_KEY")
    serve(options.url, options.api_key, sys.stdin, sys.stdout)
