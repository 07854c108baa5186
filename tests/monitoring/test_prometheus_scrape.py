"""A real Prometheus server scrapes a gunicorn with two workers beside a Celery worker, with the
token: after a few recalls, a PromQL query through Prometheus' HTTP API returns the recall
latency histogram, its count the sum of what both workers served; after an ingestion, the
Celery worker's task outcome, which reaches Prometheus through gunicorn's /metrics (every
process writes into one PROMETHEUS_MULTIPROC_DIR). Prometheus is Debian's binary, unpacked by `make
prometheus`: without it the test skips, saying so, or fails under MEMORYHUB_REQUIRE_PROMETHEUS=1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psutil
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
def shared_directory(project_scratch_dir: Path) -> Path:
    """The PROMETHEUS_MULTIPROC_DIR of every process the test starts."""
    return project_scratch_dir / "multiproc"


@pytest.fixture
def queue() -> str:
    return f"test-scrape-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def server_env(
    shared_directory: Path, redis_url: str, queue: str, acme: Tenant
) -> Iterator[dict[str, str]]:
    """The production configuration (DEBUG off, real secrets) on the test database, with the
    test's Redis as broker, embeddings from a loopback stub (no process loads a model), the
    token and one shared metrics directory: for gunicorn and the Celery worker alike."""
    params = connection.settings_dict
    host = quote(str(params["HOST"]), safe="")
    with StubEmbeddings() as embeddings:
        yield {
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
            "PROMETHEUS_MULTIPROC_DIR": str(shared_directory),
            "CELERY_BROKER_URL": redis_url,
            "CELERY_TASK_DEFAULT_QUEUE": queue,
            "HF_HUB_OFFLINE": "1",
        }


@pytest.fixture
def gunicorn(project_scratch_dir: Path, server_env: dict[str, str]) -> Iterator[str]:
    """Two gunicorn workers; the tasks they queue go to the broker, never run here."""
    listener = listening_socket()
    port = listener.getsockname()[1]
    log_path = project_scratch_dir / "gunicorn.log"
    with log_path.open("w") as log, listener:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "gunicorn", "memoryhub.wsgi:application",
                "--workers", str(WORKERS), "--bind", f"fd://{listener.fileno()}",
                "--timeout", "60", "--log-level", "warning",
            ],
            cwd=PROJECT_ROOT, env=server_env, stdout=log, stderr=subprocess.STDOUT, text=True,
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
def celery_worker(
    project_scratch_dir: Path, server_env: dict[str, str], queue: str
) -> Iterator[subprocess.Popen[str]]:
    """`celery -A memoryhub worker` as in production: the prefork pool (one child, which
    runs the tasks), on the test's queue, writing into the shared directory."""
    log_path = project_scratch_dir / "celery.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "memoryhub", "worker",
                "--pool=prefork", "--concurrency=1", "--queues", queue,
                "--without-gossip", "--without-mingle", "--without-heartbeat",
                "--loglevel=WARNING",
            ],
            cwd=PROJECT_ROOT, env=server_env, stdout=log, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    process.log_path = log_path  # type: ignore[attr-defined]
    try:
        yield process
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


def nothing_died() -> None:
    pass


def wait_for_a_first_scrape(prometheus: str) -> None:
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


def test_prometheus_reads_the_recall_histogram_of_both_workers(
    prometheus: str, gunicorn: str, acme: Tenant
) -> None:
    wait_for_a_first_scrape(prometheus)

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


def test_prometheus_reads_the_task_outcomes_of_a_celery_worker(
    prometheus: str,
    gunicorn: str,
    celery_worker: subprocess.Popen[str],
    shared_directory: Path,
    acme: Tenant,
) -> None:
    """The worker runs the ingestion task gunicorn queued; its outcome reaches Prometheus
    through gunicorn's /metrics (the directory is shared), and stays there once the worker
    has stopped (a dead process's counters remain in the sums)."""

    def worker_alive() -> None:
        log_path: Path = celery_worker.log_path  # type: ignore[attr-defined]
        assert celery_worker.poll() is None, log_path.read_text()[-3000:]

    wait_for_a_first_scrape(prometheus)
    headers = {"Authorization": f"Bearer {acme.raw_key}"}
    ingested = httpx.post(
        f"{gunicorn}/api/v1/namespaces/{acme.slug}/messages",
        headers=headers,
        json={
            "subject": "u1",
            "session": "s1",
            "messages": [{"role": "user", "content": "I live in Lyon."}],
        },
        timeout=30,
    )
    assert ingested.status_code == 202, ingested.text
    job = f"{gunicorn}/api/v1/jobs/{ingested.json()['id']}"

    def finished() -> str | None:
        status = str(httpx.get(job, headers=headers, timeout=10).json()["status"])
        return None if status in {"queued", "running"} else status

    assert wait_for("the worker ran the job", finished, 120, worker_alive) == "succeeded"

    succeeded = 'memoryhub_celery_tasks_total{task="pipeline.run_ingest_job",outcome="succeeded"}'
    counted = wait_for("the task counted", lambda: query(prometheus, succeeded), 30, worker_alive)
    assert float(counted[0]["value"][1]) == 1
    assert counted[0]["metric"]["job"] == "memoryhub"  # scraped from gunicorn
    jobs = query(prometheus, 'memoryhub_ingest_jobs_total{outcome="succeeded"}')
    assert float(jobs[0]["value"][1]) == 1
    # The pool's child ran it and wrote its figures into the shared directory.
    children = psutil.Process(celery_worker.pid).children()
    assert any((shared_directory / f"counter_{child.pid}.db").exists() for child in children)

    stop_process(celery_worker)
    assert celery_worker.returncode == 0
    stopped_at = time.time()

    def scraped_since_the_stop() -> list[dict[str, Any]]:
        rows = query(prometheus, f"timestamp({succeeded})")
        return [row for row in rows if float(row["value"][1]) > stopped_at]

    wait_for("a scrape after the stop", scraped_since_the_stop, 30, nothing_died)
    assert float(query(prometheus, succeeded)[0]["value"][1]) == 1
