"""PostgreSQL restarted under load, with real processes: the production configuration
(gunicorn, DEBUG off, real secrets, a kept connection per worker) on a PostgreSQL of its own,
writes and recalls arriving all the while.

While the database is gone every request is answered 503 in the one error shape with a
Retry-After, never a 500; each write was stored whole (the memory and its audit event) or not
at all; writes succeed again within seconds of the restart, and `audit_verify` passes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx
import psycopg
import pytest

from memoryhub.embedded_db import EmbeddedServer, ensure_server, stop_server
from memoryhub.secrets_store import new_kek, new_secret_key
from tests.conftest import PROJECT_ROOT, run_python, stop_process
from tests.loopback import listening_socket
from tests.memories.embeddings_stub import StubEmbeddings

SLUG = "restart"
WORKERS = 2
# After the restart each worker's first query finds its connection dead and replaces it
# (`conn_health_checks`): a request sent after the restart may fail at most once per worker
# and per database connection it holds. A bound in requests, not in seconds: a loaded
# machine answers slower, not differently.
FAILURES_AFTER_RESTART = 2 * WORKERS


def _database_url(server: EmbeddedServer) -> str:
    host = quote(str(server.socket_dir), safe="")
    return f"postgres://{server.user}@{host}:{server.port}/memoryhub"


@dataclass
class Stack:
    scratch: Path
    server: EmbeddedServer
    env: dict[str, str]
    base_url: str
    raw_key: str


@pytest.fixture
def embeddings() -> Iterator[StubEmbeddings]:
    """The embedding endpoint (a remote service in production): the test is about the
    database, and gunicorn's workers then start without loading a model."""
    with StubEmbeddings() as stub:
        yield stub


@pytest.fixture
def stack(project_scratch_dir: Path, embeddings: StubEmbeddings) -> Iterator[Stack]:
    server = ensure_server(project_scratch_dir)
    env = {
        "DATABASE_URL": _database_url(server),
        "DEBUG": "0",
        "SECRET_KEY": new_secret_key(),
        "MEMORYHUB_KEK": new_kek(),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "MEMORYHUB_EMBEDDING_PROVIDER": "openai",
        "MEMORYHUB_EMBEDDING_URL": embeddings.url,
    }
    migrate = run_python(
        "import django; django.setup(); from django.core.management import call_command; "
        "call_command('migrate', verbosity=0)",
        env=env,
        timeout=300,
    )
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    made = run_python(
        "import django; django.setup()\n"
        "from apps.accounts.services import api_key_create\n"
        "from apps.audit.actors import Actor\n"
        "from apps.namespaces.services import namespace_create\n"
        f"ns = namespace_create(actor=Actor.system('tests'), slug={SLUG!r}, name='Restart')\n"
        "_, raw = api_key_create(actor=Actor.system('tests'), name='load', namespaces=[ns],"
        " permissions=['memories:read', 'memories:write', 'context'])\n"
        "print(raw)",
        env=env,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    listener = listening_socket()  # held until gunicorn serves on it: no port race
    port = listener.getsockname()[1]
    base = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DEBUG", "DATABASE_URL", "DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL"}
    }
    # To a file: a pipe nobody reads fills up with the logged errors and blocks the workers.
    log = (project_scratch_dir / "gunicorn.log").open("w")
    with listener:
        gunicorn = subprocess.Popen(
            [
                sys.executable, "-m", "gunicorn", "memoryhub.wsgi", "--workers", str(WORKERS),
                "--bind", f"fd://{listener.fileno()}", "--timeout", "60",
                "--log-level", "warning",
            ],
            cwd=PROJECT_ROOT,
            env={**base, **env, "DJANGO_SETTINGS_MODULE": "memoryhub.settings"},
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            pass_fds=(listener.fileno(),),
        )  # fmt: skip
    try:
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            assert gunicorn.poll() is None, (project_scratch_dir / "gunicorn.log").read_text()
            try:
                if httpx.get(f"{base_url}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "gunicorn did not become ready in 90 s"
            time.sleep(0.3)
        yield Stack(project_scratch_dir, server, env, base_url, made.stdout.strip())
    finally:
        stop_process(gunicorn)
        log.close()
        stop_server(project_scratch_dir)


@dataclass
class Traffic:
    """Writes and recalls sent one after another until stopped, with every answer kept
    beside the moment its request was sent."""

    stack: Stack
    writes: list[tuple[float, int, dict]] = field(default_factory=list)
    recalls: list[tuple[float, int, dict]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def _loop(self, kind: str) -> None:
        url = f"{self.stack.base_url}/api/v1/namespaces/{SLUG}/"
        headers = {"Authorization": f"Bearer {self.stack.raw_key}"}
        with httpx.Client(headers=headers, timeout=30) as client:
            number = 0
            while not self.stop.is_set():
                number += 1
                sent = time.monotonic()
                if kind == "write":
                    content = f"Fact {number}: I keep a {number}th plant."
                    body = {"subject": "u1", "content": content}
                    response = client.post(url + "memories", json=body)
                    self.writes.append((sent, response.status_code, response.json()))
                else:
                    body = {"subject": "u1", "query": "Which plants do I keep?", "k": 5}
                    response = client.post(url + "recall", json=body)
                    self.recalls.append((sent, response.status_code, response.json()))
                time.sleep(0.02)

    def __enter__(self) -> Traffic:
        self.threads = [
            threading.Thread(target=self._loop, args=(kind,), daemon=True)
            for kind in ("write", "recall")
        ]
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)


def _succeeded(answers: list[tuple[float, int, dict]]) -> bool:
    return any(status in (200, 201) for _, status, _ in answers)


def _refused_since(answers: list[tuple[float, int, dict]], since: float) -> bool:
    return any(status == 503 and at > since for at, status, _ in answers)


def _recovered(traffic: Traffic, since: float) -> bool:
    writes = [status for at, status, _ in list(traffic.writes) if at > since]
    recalled = any(status == 200 for at, status, _ in list(traffic.recalls) if at > since)
    return recalled and len(writes) >= 3 and all(status == 201 for status in writes[-3:])


def _wait_until(
    condition: Callable[[], bool], deadline: float, message: str, *, fail: bool = True
) -> None:
    """Poll `condition` until it holds; at `deadline`, fail with `message` (or, with
    `fail=False`, return and leave the verdict to the assertions that follow)."""
    while not condition():
        if time.monotonic() >= deadline:
            assert not fail, message
            return
        time.sleep(0.1)


def _rows(server: EmbeddedServer, query: str) -> set[str]:
    with psycopg.connect(**server.connection_kwargs()) as conn:
        return {str(row[0]) for row in conn.execute(query)}


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_requests_get_503_while_postgresql_restarts_and_nothing_is_half_written(stack: Stack):
    headers = {"Authorization": f"Bearer {stack.raw_key}"}
    warm = httpx.post(
        f"{stack.base_url}/api/v1/namespaces/{SLUG}/memories",
        json={"subject": "u1", "content": "I water the plants on Sundays."},
        headers=headers,
        timeout=30,
    )
    assert warm.status_code == 201, warm.text

    with Traffic(stack) as traffic:
        _wait_until(
            lambda: _succeeded(traffic.writes) and _succeeded(traffic.recalls),
            time.monotonic() + 60,
            "no write and recall succeeded in 60 s",
        )
        stopped_at = time.monotonic()
        assert stop_server(stack.scratch), "the scratch PostgreSQL was not running"
        # Down until requests have been answered 503 while it was.
        _wait_until(
            lambda: _refused_since(traffic.writes + traffic.recalls, stopped_at),
            time.monotonic() + 60,
            "no request was answered 503 while PostgreSQL was down",
        )
        restarted = ensure_server(stack.scratch)
        restarted_at = time.monotonic()
        assert restarted.socket_dir == stack.server.socket_dir
        assert restarted.port == stack.server.port
        # Traffic goes on until it has recovered (three writes in a row and a recall succeed),
        # or a generous minute, after which the assertions below report what was seen.
        _wait_until(
            lambda: _recovered(traffic, restarted_at),
            time.monotonic() + 60,
            "writes and recalls did not succeed again after the restart",
            fail=False,
        )

    writes, recalls = traffic.writes, traffic.recalls
    statuses = {status for _, status, _ in writes + recalls}
    assert statuses <= {201, 200, 503}, statuses  # never a 500 with a stack trace
    failed = [body for _, status, body in writes + recalls if status == 503]
    assert failed, "no request reached the server while PostgreSQL was down"
    for body in failed:
        assert body["error"]["code"] == "service_unavailable", body
        assert set(body["error"]) == {"code", "message", "details"}
    assert any(status == 201 for at, status, _ in writes if at < stopped_at)
    assert any(status == 200 for at, status, _ in recalls if at < stopped_at)
    # Recovered at once: of the requests sent after the restart, no more than the dead
    # connections' first uses fail, and writes and recalls succeed again.
    after = [status for at, status, _ in writes + recalls if at > restarted_at]
    assert after.count(503) <= FAILURES_AFTER_RESTART, after
    assert any(status == 201 for at, status, _ in writes if at > restarted_at)
    assert any(status == 200 for at, status, _ in recalls if at > restarted_at)
    assert all(status != 503 for at, status, _ in writes[-3:]), "still failing at the end"

    # Whole or nothing: each stored memory has its audit event and each 201 its memory. A
    # write whose COMMIT reached the server as the connection died may be stored though
    # answered 503 (the client cannot know; it retries with an Idempotency-Key): at most one.
    stored = _rows(stack.server, "SELECT id FROM memories_memory")
    audited = _rows(
        stack.server, "SELECT object_id FROM audit_auditevent WHERE action = 'memory.create'"
    )
    answered = {str(body["id"]) for _, status, body in writes if status == 201} | {
        str(warm.json()["id"])
    }
    assert stored == audited
    assert answered <= stored
    assert len(stored - answered) <= 1, len(stored - answered)

    verify = run_python(
        "import django; django.setup(); from django.core.management import call_command; "
        "call_command('audit_verify')",
        env=stack.env,
    )
    assert verify.returncode == 0, verify.stderr[-2000:]
    assert "Audit chains intact" in verify.stdout
