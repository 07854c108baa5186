"""The embedding models loaded before a web process serves, and whether they are: the
`embeddings` check of /readyz.

A local model loads on first use (4-12 s for the primary one, 1.5 s for the multilingual
one). gunicorn's workers (gunicorn.conf.py) and `manage.py runserver` load them before they
take a request. Anywhere else (another server, a worker started without that hook), the
first readiness probe that finds a model not loaded starts one load in the background and
answers "loading"; the probe itself never waits for a model.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol, runtime_checkable

from apps.memories.embeddings import EmbeddingProvider, get_provider
from apps.memories.multilingual import get_multilingual_provider

logger = logging.getLogger(__name__)


@runtime_checkable
class LocalModel(Protocol):
    """A provider whose model is loaded into this process on first use (a remote endpoint's
    provider has nothing to load, and no `loaded`)."""

    @property
    def loaded(self) -> bool: ...

    def embed_query(self, text: str) -> object: ...

    def embed_documents(self, texts: list[str]) -> object: ...


def local_models() -> list[LocalModel]:
    """The providers of this process (the primary one, and the multilingual one unless it
    is turned off) that load a model here."""
    providers: list[EmbeddingProvider | None] = [get_provider(), get_multilingual_provider()]
    models: list[LocalModel] = []
    for provider in providers:
        if isinstance(provider, LocalModel):
            models.append(provider)
    return models


def warm_up_embedding_models() -> bool:
    """Load every local embedding model now rather than at the first request that needs
    it, and run each path once (a single query, a batch). Nothing for a remote provider,
    which is not called before a request needs it. Returns whether a model was loaded."""
    models = local_models()
    for model in models:
        model.embed_query("warm-up")
        model.embed_documents(["warm-up"])
    return bool(models)


_loader: threading.Thread | None = None
_load_failed = False
_loader_lock = threading.Lock()


def embedding_readiness() -> str:
    """ "ok" when every local model is loaded; else "loading", with one load under way in a
    background thread (started here when none is), or "error" when the last load failed (a
    new one is started: the next probe may find it done). Quick: reads flags, loads
    nothing itself."""
    global _loader
    if all(model.loaded for model in local_models()):
        return "ok"
    with _loader_lock:
        failed = _load_failed
        if _loader is None or not _loader.is_alive():
            _loader = threading.Thread(
                target=_load_in_background, name="memoryhub-embedding-load", daemon=True
            )
            _loader.start()
    return "error" if failed else "loading"


def _load_in_background() -> None:
    global _load_failed
    try:
        warm_up_embedding_models()
    except Exception as error:  # any failure: readiness says "error", and a probe tries again
        _load_failed = True
        logger.warning("The embedding models did not load (%s)", type(error).__name__)
    else:
        _load_failed = False
