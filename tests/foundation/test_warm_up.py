"""memoryhub/warm_up.py: before a server's first request, every lazy loader a first search or
playground run would wait on has loaded and run: both embedding models (their query path on
the recall's own thread too), the token counters, the project's templates, the URL resolver
and the translation catalog of every language. Each is observed cold before the warm-up and
loaded after it."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.template import engines
from django.template.loaders.cached import Loader as CachedLoader
from django.urls import clear_url_caches, get_resolver
from django.utils.translation import trans_real

from apps.memories import embeddings, multilingual
from apps.tokens import tokenizers
from memoryhub import warm_up


class LocalModel:
    """A model loaded on first use, as the local providers are; records where it ran."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dimensions = 4
        self.loaded = False
        self.ran: list[tuple[str, str]] = []  # (path, thread's name)

    def _run(self, path: str) -> np.ndarray:
        self.loaded = True
        self.ran.append((path, threading.current_thread().name))
        return np.ones(self.dimensions, dtype=np.float32) / 2

    def embed_query(self, text: str) -> np.ndarray:
        return self._run("query")

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._run("documents") for _ in texts])


@pytest.fixture
def models() -> Iterator[tuple[LocalModel, LocalModel]]:
    primary, second = LocalModel("primary"), LocalModel("multilingual")
    embeddings.set_provider(primary)
    multilingual.set_multilingual_provider(second)
    yield primary, second
    embeddings.set_provider(None)
    multilingual.set_multilingual_provider(None, built=False)


def cached_loader() -> CachedLoader:
    (loader,) = engines["django"].engine.template_loaders[0].loaders  # inside template_partials'
    assert isinstance(loader, CachedLoader)
    return loader


def project_templates() -> set[str]:
    folder = Path(settings.BASE_DIR) / "templates"
    return {str(path.relative_to(folder)) for path in folder.rglob("*.html")}


@pytest.fixture
def cold(models: tuple[LocalModel, LocalModel]) -> None:
    """Every lazy loader the warm-up should fill, emptied (as in a process just started)."""
    tokenizers.openai_encoding.cache_clear()
    cached_loader().reset()
    clear_url_caches()
    trans_real._translations.clear()
    assert not any(model.loaded for model in models)


def test_it_loads_and_runs_both_embedding_models(
    cold: None, models: tuple[LocalModel, LocalModel]
) -> None:
    report = warm_up.warm_up()
    assert report.failed == {}
    for model in models:
        assert model.loaded, model.name
        paths = {path for path, _ in model.ran}
        assert paths == {"query", "documents"}, model.name
        # A recall embeds its query on its own thread: that thread has run each model too.
        assert any(thread.startswith("recall-embed") for _, thread in model.ran), model.ran


def test_it_builds_every_token_counter(cold: None) -> None:
    assert tokenizers.openai_encoding.cache_info().currsize == 0
    warm_up.warm_up()
    assert tokenizers.openai_encoding.cache_info().currsize == len(tokenizers.OPENAI_ENCODINGS)


def test_it_compiles_every_template_of_the_project(cold: None) -> None:
    assert cached_loader().get_template_cache == {}
    warm_up.warm_up()
    compiled = set(cached_loader().get_template_cache)
    assert project_templates() - compiled == set()
    assert "dashboard/playground/playground.html" in compiled


def test_it_builds_the_urls_and_loads_the_catalog_of_every_language(cold: None) -> None:
    warm_up.warm_up()
    languages = {code for code, _ in settings.LANGUAGES}
    assert languages <= set(get_resolver()._reverse_dict)
    assert languages <= set(trans_real._translations)


def test_a_failing_step_is_reported_and_the_others_still_run(
    cold: None, models: tuple[LocalModel, LocalModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail() -> None:
        raise OSError("no model files")

    monkeypatch.setitem(warm_up._steps, "embedding models", fail)
    report = warm_up.warm_up()
    assert report.failed == {"embedding models": "OSError"}
    assert "failed: embedding models (OSError)" in report.summary()
    assert "embedding models" not in report.seconds
    assert tokenizers.openai_encoding.cache_info().currsize == len(tokenizers.OPENAI_ENCODINGS)
    assert set(report.seconds) == set(warm_up.warm_up_steps()) - {"embedding models"}


def test_the_steps_run_in_order_models_before_the_recall_thread() -> None:
    steps = warm_up.warm_up_steps()
    assert steps.index("embedding models") < steps.index("recall's query thread")
    assert {"URLs and translations", "templates", "token counters"} <= set(steps)
