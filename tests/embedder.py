"""A deterministic, dependency-free embedder for tests: hashed bags of stemmed words.

Texts sharing words get similar vectors, so ranking tests are meaningful and repeatable,
without loading a model. One test loads the real default model (tests/memories/test_recall).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from apps.memories.embeddings import normalise
from apps.memories.keyword_index import tokenize


class DeterministicEmbedder:
    name = "test:hashed-bag-of-words"
    dimensions = 384

    def __init__(self) -> None:
        self.calls = 0

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimensions, dtype=np.float32)
        for token in tokenize(text) or [text.strip().lower() or "empty"]:
            digest = hashlib.sha256(token.encode()).digest()
            slot = int.from_bytes(digest[:4], "big") % self.dimensions
            vector[slot] += 1.0 if digest[4] % 2 else -1.0
        if not vector.any():
            vector[0] = 1.0
        return vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return normalise(np.stack([self._vector(text) for text in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class EnglishOnlyEmbedder(DeterministicEmbedder):
    """As an English-only model does (all-MiniLM-L6-v2 reads most Han characters as one
    unknown token): every Chinese sentence lands on one point."""

    def _vector(self, text: str) -> np.ndarray:
        if any("\u4e00" <= char <= "\u9fff" for char in text):
            return super()._vector("chinese")
        return super()._vector(text)
