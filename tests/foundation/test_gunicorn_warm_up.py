"""gunicorn.conf.py: a web worker loads the local embedding models before its first request,
so no request waits for them (or meets gunicorn's timeout because of them), and /readyz is
ready from the first probe."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from django.db import connection

from apps.memories import embeddings, model_loading
from memoryhub import warm_up
from memoryhub.secrets_store import new_kek, new_secret_key
from tests.conftest import PROJECT_ROOT, stop_process
from tests.loopback import listening_socket

LOADED = "Loaded embedding model"


def test_a_remote_provider_is_not_called_to_warm_up() -> None:
    remote = embeddings.OpenAICompatibleProvider(base_url="http://127.0.0.1:1", model="m")
    embeddings.set_provider(remote)  # and no multilingual model (tests/conftest.py)
    assert model_loading.warm_up_embedding_models() is False  # no request: it would fail


class FakeWorker:
    def __init__(self) -> None:
        self.notified = 0
        self.log = logging.getLogger("tests.gunicorn")

    def notify(self) -> None:
        self.notified += 1


def post_worker_init() -> Callable[[Any], None]:
    spec = importlib.util.spec_from_file_location(
        "gunicorn_conf", PROJECT_ROOT / "gunicorn.conf.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.post_worker_init


def test_a_worker_whose_models_fail_to_load_still_serves(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def fail() -> bool:
        raise OSError("no model files")

    monkeypatch.setitem(warm_up._steps, "embedding models", fail)
    worker = FakeWorker()
    post_worker_init()(worker)  # no exception: gunicorn would stop booting workers
    assert worker.notified == 1
    assert "'embedding models' failed (OSError)" in caplog.text


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.django_db
def test_a_gunicorn_worker_loads_the_models_before_any_request(project_scratch_dir: Path) -> None:
    params = connection.settings_dict
    host = quote(str(params["HOST"]), safe="")
    listener = listening_socket()
    port = listener.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if k not in {"DEBUG", "CELERY_BROKER_URL"}},
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
        "DATABASE_URL": f"postgres://{params['USER']}@{host}:{params['PORT']}/{params['NAME']}",
        "DEBUG": "0",
        "SECRET_KEY": new_secret_key(),
        "MEMORYHUB_KEK": new_kek(),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "HF_HUB_OFFLINE": "1",
        "MEMORYHUB_EMBEDDING_PROVIDER": "local",
    }
    log_path = project_scratch_dir / "gunicorn.log"
    with log_path.open("w") as log, listener:
        # Started in the project folder, where gunicorn reads gunicorn.conf.py by itself. It
        # serves on the socket this test holds (no port left free for another to take).
        process = subprocess.Popen(
            [
                sys.executable, "-m", "gunicorn", "memoryhub.wsgi:application", "--workers", "1",
                "--bind", f"fd://{listener.fileno()}",
            ],
            cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
            pass_fds=(listener.fileno(),),
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while LOADED not in log_path.read_text():  # no request has been sent
                assert process.poll() is None, log_path.read_text()[-3000:]
                assert time.monotonic() < deadline, "the worker did not load the models"
                time.sleep(0.2)
            ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30)
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"]["embeddings"] == "ok"
        finally:
            stop_process(process)
    # Each model once (the primary and the multilingual one), by the one worker.
    assert log_path.read_text().count(LOADED) == 2
