import pytest
from django.db import connection
from django.test import Client


@pytest.mark.django_db
def test_it_reports_ok_with_the_pgvector_version(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    assert body["pgvector"].startswith("0.")
    assert body["broker"] == "in-process"
    assert "replica" not in body  # none configured: nothing to report


@pytest.mark.django_db(transaction=True)
def test_it_reports_503_when_the_database_is_unreachable(
    client: Client, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    connection.close()
    monkeypatch.setitem(connection.settings_dict, "HOST", str(tmp_path / "no-server-here"))
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] == "error"
    assert response.json()["status"] == "error"
    connection.close()


@pytest.mark.django_db
def test_it_reports_an_unreachable_broker(client: Client, settings) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from memoryhub.celery import app

    previous = app.conf.broker_url
    app.conf.broker_url = settings.CELERY_BROKER_URL
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = previous
    assert response.status_code == 503
    assert response.json()["broker"] == "error"
