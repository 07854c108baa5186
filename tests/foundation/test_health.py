"""/healthz is liveness (the process serves; nothing else is checked), /readyz readiness
(the database, the broker when one is configured, the embedding models)."""

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest
from django.db import connection
from django.test import Client

from apps.memories.embeddings import set_provider
from apps.memories.multilingual import set_multilingual_provider
from memoryhub import maintenance


@pytest.fixture
def database_unreachable(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    connection.close()
    monkeypatch.setitem(connection.settings_dict, "HOST", str(tmp_path / "no-server-here"))
    yield
    connection.close()


@pytest.fixture
def broker_unreachable(settings) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from memoryhub.celery import app

    previous = app.conf.broker_url
    app.conf.broker_url = settings.CELERY_BROKER_URL
    yield
    app.conf.broker_url = previous


class SlowModel:
    """A local model that loads on first use, when the test lets it (`release`)."""

    name = "local:slow"
    dimensions = 384

    def __init__(self, *, fails: bool = False) -> None:
        self.release = threading.Event()
        self.fails = fails
        self.loads = 0
        self._loaded = False

    @property
    def loaded(self) -> bool:
        return self._loaded

    def embed_query(self, text: str) -> np.ndarray:
        self.loads += 1
        assert self.release.wait(10), "the test never let the model load"
        if self.fails:
            raise OSError("no model files")
        self._loaded = True
        return np.ones(self.dimensions, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), self.dimensions), dtype=np.float32)


def _ready_within(client: Client, seconds: float = 10) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        response = client.get("/readyz")
        if response.status_code == 200:
            return response.json()
        time.sleep(0.02)
    raise AssertionError(f"/readyz not ready: {response.json()}")


def test_it_is_alive_without_checking_anything(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db(transaction=True)
def test_it_is_alive_with_the_database_unreachable(
    client: Client, database_unreachable: None
) -> None:
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 503  # the database was out of reach indeed


@pytest.mark.django_db
def test_it_is_alive_with_the_broker_unreachable(client: Client, broker_unreachable: None) -> None:
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
def test_it_is_alive_while_a_restore_runs(client: Client, settings, tmp_path) -> None:
    settings.DATA_DIR = tmp_path
    maintenance.marker().write_text("999999999\n")  # another process restores
    assert client.get("/healthz").status_code == 200
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "restoring"


@pytest.mark.django_db
def test_it_is_ready_naming_each_check(client: Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "checks": {"database": "ok", "broker": "in-process", "embeddings": "ok"},
    }
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db(transaction=True)
def test_it_is_not_ready_with_the_database_unreachable(
    client: Client, database_unreachable: None
) -> None:
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "not_ready"
    assert response.json()["checks"]["database"] == "error"
    assert response.json()["checks"]["embeddings"] == "ok"


@pytest.mark.django_db
def test_it_is_not_ready_with_the_broker_unreachable(
    client: Client, broker_unreachable: None
) -> None:
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"] == {
        "database": "ok",
        "broker": "error",
        "embeddings": "ok",
    }
    assert "redis" not in response.content.decode()  # no address, no secret


@pytest.mark.django_db
def test_it_is_not_ready_until_the_models_are_loaded_then_ready(client: Client) -> None:
    model, multilingual = SlowModel(), SlowModel()
    set_provider(model)
    set_multilingual_provider(multilingual)
    first = client.get("/readyz")  # answers at once: the load runs in the background
    assert first.status_code == 503
    assert first.json()["status"] == "not_ready"
    assert first.json()["checks"] == {
        "database": "ok",
        "broker": "in-process",
        "embeddings": "loading",
    }
    assert client.get("/readyz").status_code == 503
    model.release.set()
    multilingual.release.set()
    assert _ready_within(client)["checks"]["embeddings"] == "ok"
    assert (model.loads, multilingual.loads) == (1, 1)  # one load, however many probes


@pytest.mark.django_db
def test_it_says_a_failed_load_and_tries_again(client: Client) -> None:
    model = SlowModel(fails=True)
    model.release.set()
    set_provider(model)
    deadline = time.monotonic() + 10
    while client.get("/readyz").json()["checks"]["embeddings"] != "error":
        assert time.monotonic() < deadline, "the failed load was never reported"
        time.sleep(0.02)
    model.fails = False
    assert _ready_within(client)["status"] == "ready"
