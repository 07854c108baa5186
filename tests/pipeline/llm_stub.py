"""A small OpenAI-compatible chat-completions server on loopback, for tests (never a real
endpoint). `mode` decides each answer: ok (the JSON in `reply`), garbage, down (503), refuse (401),
slow."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StubLlm:
    def __init__(self) -> None:
        self.mode = "ok"
        self.reply: str = '{"memories": []}'
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append(body)
                stub.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": "not found"})
                if stub.mode == "down":
                    return self._send(503, {"error": "overloaded"})
                if stub.mode == "refuse":
                    return self._send(401, {"error": "bad key"})
                if stub.mode == "slow":
                    time.sleep(1.5)
                content = (
                    "certainly! here are the memories: ..."
                    if stub.mode == "garbage"
                    else stub.reply
                )
                self._send(
                    200, {"choices": [{"message": {"role": "assistant", "content": content}}]}
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # The client may have given up (the slow mode's timeout).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StubLlm:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
