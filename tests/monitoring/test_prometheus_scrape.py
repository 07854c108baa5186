"""A real Prometheus server scrapes a gunicorn with two workers, with the token: after a few
recalls, a PromQL query through Prometheus' HTTP API returns the recall latency histogram,
its count the sum of what both workers served (the figures are shared between processes
through PROMETHEUS_MULTIPROC_DIR). Prometheus is Debian's binary, unpacked by `make
prometheus`: without it the test skips, saying so, or fails under MEMORYHUB_REQUIRE_PROMETHEUS=1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from django.conf import settings
from django.db import connection

from apps.pipeline.llm_server import free_port
from tests.conftest import PROJECT_ROOT, Tenant, stop_process
from tests.loopback import listening_socket
from tests.memories.embeddings_stub import StubEmbeddings

PROMETHEUS = PROJECT_ROOT / "var" / "prometheus" / "usr" / "bin" / "prometheus"
TOKEN = "scrape-token-0123456789abcdef"
WORKERS = 2
RECALLS = 12

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def prometheus_binary() -> Path:
    if not os.access(PROMETHEUS, os.X_OK):
        reason = f"no Prometheus server at {PROMETHEUS}: run `make prometheus`"
        if os.environ.get("MEMORYHUB_REQUIRE_PROMETHEUS") == "1":
            pytest.fail(f"{reason}, and MEMORYHUB_REQUIRE_PROMETHEUS=1 forbids skipping.")
        pytest.skip(reason)
    return PROMETHEUS


def wait_for(what: str, check: Callable[[], Any], seconds: float, alive: Callable[[], None]) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        alive()
        try:
            found = check()
        except httpx.TransportError:
            found = None
        if found:
            return found
        assert time.monotonic() < deadline, f"{what}: not within {seconds:.0f} s"
        time.sleep(0.3)


@pytest.fixture
def gunicorn(project_scratch_dir: Path, acme: Tenant) -> Iterator[str]:
    """The production configuration (DEBUG off, real secrets) on the test database, two
    workers, embeddings from a loopback stub (the workers load no model)."""
    params = connection.settings_dict
    host = quote(str(params["HOST"]), safe="")
    listener = listening_socket()
    port = listener.getsockname()[1]
    shared = project_scratch_dir / "multiproc"
    with StubEmbeddings() as embeddings:
        env = {
            **{k: v for k, v in os.environ.items() if k not in {"DEBUG", "CELERY_BROKER_URL"}},
            "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
            "DATABASE_URL": f"postgres://{params['USER']}@{host}:{params['PORT']}/{params['NAME']}",
            "DEBUG": "0",
            # The test's own secrets: the key and the namespace it made must open there.
            "SECRET_KEY": settings.SECRET_KEY,
            "MEMORYHUB_KEK": settings.MEMORYHUB_KEK,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "MEMORYHUB_EMBEDDING_PROVIDER": "openai",
            "MEMORYHUB_EMBEDDING_URL": embeddings.url,
            "MEMORYHUB_METRICS_TOKEN": TOKEN,
            "PROMETHEUS_MULTIPROC_DIR": str(shared),
        }
        log_path = project_scratch_dir / "gunicorn.log"
        with log_path.open("w") as log, listener:
            process = subprocess.Popen(
                [
                    sys.executable, "-m", "gunicorn", "memoryhub.wsgi:application",
                    "--workers", str(WORKERS), "--bind", f"fd://{listener.fileno()}",
                    "--timeout", "60", "--log-level", "warning",
                ],
                cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
                pass_fds=(listener.fileno(),),
            )  # fmt: skip
        base_url = f"http://127.0.0.1:{port}"

        def alive() -> None:
            assert process.poll() is None, log_path.read_text()[-3000:]

        try:
            wait_for(
                "gunicorn healthy",
                lambda: httpx.get(f"{base_url}/healthz", timeout=5).status_code == 200,
                90,
                alive,
            )
            yield base_url
        finally:
            stop_process(process)


@pytest.fixture
def prometheus(prometheus_binary: Path, project_scratch_dir: Path, gunicorn: str) -> Iterator[str]:
    target = gunicorn.removeprefix("http://")
    config = project_scratch_dir / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: memoryhub\n"
        "    scrape_interval: 1s\n"
        f"    authorization: {{type: Bearer, credentials: {TOKEN}}}\n"
        f"    static_configs: [{{targets: ['{target}']}}]\n"
    )
    port = free_port()
    log_path = project_scratch_dir / "prometheus.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                str(prometheus_binary), f"--config.file={config}",
                f"--storage.tsdb.path={project_scratch_dir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process)


def query(prometheus: str, promql: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{prometheus}/api/v1/query", params={"query": promql}, timeout=10)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_prometheus_reads_the_recall_histogram_of_both_workers(
    prometheus: str, gunicorn: str, acme: Tenant
) -> None:
    def nothing_died() -> None:
        pass

    # Prometheus answers 503 until its storage is ready; the first scrape comes about 5 s
    # after it starts.
    wait_for(
        "Prometheus ready",
        lambda: httpx.get(f"{prometheus}/-/ready", timeout=5).status_code == 200,
        30,
        nothing_died,
    )
    up = wait_for("a first scrape", lambda: query(prometheus, "up == 1"), 30, nothing_died)
    assert up[0]["metric"]["job"] == "memoryhub"

    api = httpx.Client(base_url=gunicorn, headers={"Authorization": f"Bearer {acme.raw_key}"})
    created = api.post(
        f"/api/v1/namespaces/{acme.slug}/memories",
        json={"subject": "u1", "content": "Prefers window seats on long flights"},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    for _ in range(RECALLS):
        # A new connection each time: gunicorn's workers share them out.
        recalled = httpx.post(
            f"{gunicorn}/api/v1/namespaces/{acme.slug}/recall",
            headers={"Authorization": f"Bearer {acme.raw_key}"},
            json={"subject": "u1", "query": "window seat"},
            timeout=30,
        )
        assert recalled.status_code == 200, recalled.text

    counted = wait_for(
        "the recalls counted",
        lambda: [
            row
            for row in query(prometheus, "sum(memoryhub_recall_duration_seconds_count)")
            if float(row["value"][1]) >= RECALLS
        ],
        30,
        nothing_died,
    )
    assert float(counted[0]["value"][1]) == RECALLS
    buckets = query(prometheus, "sum by (le) (memoryhub_recall_duration_seconds_bucket)")
    assert {row["metric"]["le"] for row in buckets} >= {"0.1", "1.0", "+Inf"}
    assert next(float(r["value"][1]) for r in buckets if r["metric"]["le"] == "+Inf") == RECALLS
    rate = "sum by (le) (increase(memoryhub_recall_duration_seconds_bucket[1m]))"
    p95 = query(prometheus, f"histogram_quantile(0.95, {rate})")
    assert p95
    assert float(p95[0]["value"][1]) > 0
    routes = query(
        prometheus,
        'sum(memoryhub_http_requests_total{route="api/v1/namespaces/<slug:namespace>/recall"})',
    )
    assert float(routes[0]["value"][1]) == RECALLS
