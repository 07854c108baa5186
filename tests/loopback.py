"""The scaffolding of the loopback stubs that stand in for remote paid services in tests (an
OpenAI-compatible LLM, an embeddings endpoint): an HTTP server on 127.0.0.1 that records
every POST (body, headers, path) and answers what the subclass's `answer` says."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


def listening_socket() -> socket.socket:
    """A socket listening on 127.0.0.1, on a port the kernel picks, to hand to a server
    process (gunicorn's `--bind fd://N` with `pass_fds`): the port is held from the moment
    it is chosen, so no other process can take it before the server serves on it."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.set_inheritable(True)
    return listener


class LoopbackStub:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append(body)
                stub.headers.append(dict(self.headers))
                stub.paths.append(self.path)
                status, payload = stub.answer(self.path, body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # The client may have given up (a slow answer's timeout).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A short poll: shutting the stub down after each test then takes no half second.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | bytes]:
        """(HTTP status, a JSON-ready payload or raw bytes) for one request."""
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
