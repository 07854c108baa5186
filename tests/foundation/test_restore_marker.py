"""While a restore runs in another process, the web answers 503 and a worker takes no work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from celery.exceptions import Retry
from django.test import Client

from memoryhub import maintenance
from memoryhub.celery import app
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def marker(tmp_path: Path, settings: Any) -> Path:
    settings.DATA_DIR = tmp_path
    return maintenance.marker()


def test_the_api_and_the_pages_answer_503_while_another_process_restores(
    marker: Path, acme: Tenant, alice_client: Client
) -> None:
    assert acme.client.get(acme.url("memories")).status_code == 200
    marker.write_text("999999999\n")  # another process
    response = acme.client.get(acme.url("memories"))
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "restoring"
    assert response["Retry-After"] == "30"
    page = alice_client.get("/")
    assert page.status_code == 503
    assert b"being restored from a backup" in page.content
    chinese = alice_client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "正在从备份恢复" in chinese.content.decode()  # in the reader's language
    marker.unlink()
    assert acme.client.get(acme.url("memories")).status_code == 200


def test_the_restoring_process_itself_goes_on(marker: Path) -> None:
    with maintenance.restore_marker() as held:
        assert held.exists()
        assert not maintenance.restoring()
    assert not held.exists()


def test_a_failed_restore_leaves_the_marker(marker: Path) -> None:
    with pytest.raises(RuntimeError), maintenance.restore_marker():
        raise RuntimeError("pg_restore failed")
    assert marker.exists()


def test_a_worker_puts_its_task_back_while_a_restore_runs(
    marker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = app.tasks["memoryhub.ping"]
    marker.write_text("999999999\n")
    asked: list[dict[str, Any]] = []

    def retry(**options: Any) -> Retry:
        asked.append(options)
        return Retry("restoring")

    monkeypatch.setattr(task, "retry", retry)
    task.push_request(is_eager=False)
    try:
        with pytest.raises(Retry):
            task("hello")
    finally:
        task.pop_request()
    assert asked == [{"countdown": 30, "max_retries": None}]
    marker.unlink()
    assert task("hello")["pong"] == "hello"
