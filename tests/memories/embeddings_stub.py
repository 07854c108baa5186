"""A small OpenAI-compatible `/v1/embeddings` server on loopback, for tests (never a real
endpoint). Each input text gets a known, deliberately unnormalised vector (`vector_for`);
the items of an answer come in reverse order, each with its `index`, as a server may send
them. `mode` decides each answer: ok, garbage (200 with a non-JSON body), wrong_count (one
vector too few), down (503), refuse (401), slow."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

DIMENSIONS = 384


def vector_for(text: str, dimensions: int = DIMENSIONS) -> np.ndarray:
    """The stub's vector for `text`: reproducible, distinct per text, of norm well above 1."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    return np.random.default_rng(seed).normal(0.0, 3.0, dimensions)


class StubEmbeddings:
    def __init__(self, dimensions: int = DIMENSIONS) -> None:
        self.mode = "ok"
        self.dimensions = dimensions
        self.failures_left: int | None = None  # with "down": answer 503 this many times only
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
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": "not found"})
                if stub.mode == "down" and stub.failures_left != 0:
                    if stub.failures_left is not None:
                        stub.failures_left -= 1
                    return self._send(503, {"error": "overloaded"})
                if stub.mode == "refuse":
                    return self._send(401, {"error": "bad key"})
                if stub.mode == "garbage":
                    return self._send_raw(200, b"<html>certainly! here are your vectors</html>")
                if stub.mode == "slow":
                    time.sleep(1.5)
                vectors = [vector_for(text, stub.dimensions) for text in body["input"]]
                items = [
                    {"object": "embedding", "index": i, "embedding": vector.tolist()}
                    for i, vector in enumerate(vectors)
                ]
                if stub.mode == "wrong_count":
                    items = items[:-1]
                items.reverse()  # the index, not the position, says which text it is
                self._send(200, {"object": "list", "data": items, "model": body.get("model")})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_raw(status, json.dumps(payload).encode())

            def _send_raw(self, status: int, data: bytes) -> None:
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
        # A short poll: shutting the stub down after each test then takes no half second.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StubEmbeddings:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
