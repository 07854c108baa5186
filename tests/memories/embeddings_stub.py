"""A small OpenAI-compatible `/v1/embeddings` server on loopback, for tests (never a real
endpoint). Each input text gets a known, deliberately unnormalised vector (`vector_for`);
the items of an answer come in reverse order, each with its `index`, as a server may send
them. `mode` decides each answer: ok, garbage (200 with a non-JSON body), wrong_count (one
vector too few), down (503), refuse (401), slow."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np

from tests.loopback import LoopbackStub

DIMENSIONS = 384


def vector_for(text: str, dimensions: int = DIMENSIONS) -> np.ndarray:
    """The stub's vector for `text`: reproducible, distinct per text, of norm well above 1."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    return np.random.default_rng(seed).normal(0.0, 3.0, dimensions)


class StubEmbeddings(LoopbackStub):
    def __init__(self, dimensions: int = DIMENSIONS) -> None:
        super().__init__()
        self.mode = "ok"
        self.dimensions = dimensions
        self.failures_left: int | None = None  # with "down": answer 503 this many times only

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | bytes]:
        if path != "/v1/embeddings":
            return 404, {"error": "not found"}
        if self.mode == "down" and self.failures_left != 0:
            if self.failures_left is not None:
                self.failures_left -= 1
            return 503, {"error": "overloaded"}
        if self.mode == "refuse":
            return 401, {"error": "bad key"}
        if self.mode == "garbage":
            return 200, b"<html>certainly! here are your vectors</html>"
        if self.mode == "slow":
            time.sleep(1.5)
        vectors = [vector_for(text, self.dimensions) for text in body["input"]]
        items = [
            {"object": "embedding", "index": i, "embedding": vector.tolist()}
            for i, vector in enumerate(vectors)
        ]
        if self.mode == "wrong_count":
            items = items[:-1]
        items.reverse()  # the index, not the position, says which text it is
        return 200, {"object": "list", "data": items, "model": body.get("model")}
