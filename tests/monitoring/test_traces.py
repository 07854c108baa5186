"""Traces, end to end: a gunicorn worker with OTEL_EXPORTER_OTLP_ENDPOINT set exports its
spans over OTLP/HTTP to a receiver in this process (a stdlib HTTP server decoding
`ExportTraceServiceRequest`). A memory is written with planted content, recalled with a
planted query, and the subject (a planted external id) is read through URLs whose path and
query string hold it. The recall's span tree is checked, and none of the planted strings, nor
the API key, appears anywhere in what was exported: attribute values, span names, events,
status, resource, or the raw bytes received. A Celery worker (the prefork pool: tracing set
up in its child process) traces a task without its arguments.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from celery import Celery
from django.conf import settings
from django.db import connection
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.conftest import PROJECT_ROOT, Tenant, stop_process
from tests.loopback import listening_socket
from tests.memories.embeddings_stub import StubEmbeddings

SUBJECT = "subject-planted-5e0b7c"
CONTENT = "Keeps a brass quokka-planted-8d41f2 on the windowsill"
QUERY = "where is the brass figure on the windowsill, wombat-planted-c93a17"
RECALL_ROUTE = "api/v1/namespaces/<slug:namespace>/recall"
SUBJECT_ROUTE = "api/v1/namespaces/<slug:namespace>/subjects/<str:external_id>"
RECALL_CHILDREN = {"recall.embed", "recall.candidates", "recall.score", "recall.decrypt"}
URL_ATTRIBUTES = {"http.target", "http.url", "url.path", "url.query", "url.full"}
# Eight numbers in a row, as a vector written out would be.
A_VECTOR = re.compile(r"(-?\d+\.\d+[,\s]+){8}")

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]


@dataclass
class Received:
    """What the receiver was sent: each request's body (un-gzipped) and its decoding."""

    bodies: list[bytes] = field(default_factory=list)
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def spans(self) -> list[Span]:
        with self.lock:
            return [
                span
                for request in self.requests
                for resource_spans in request.resource_spans
                for scope_spans in resource_spans.scope_spans
                for span in scope_spans.spans
            ]


def _handler(received: Received) -> type[BaseHTTPRequestHandler]:
    class OtlpReceiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            request = ExportTraceServiceRequest.FromString(body)
            with received.lock:
                received.bodies.append(body)
                received.requests.append(request)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return OtlpReceiver


@pytest.fixture
def receiver() -> Iterator[tuple[str, Received]]:
    received = Received()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(received))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def _tracing_environment(endpoint: str) -> dict[str, str]:
    """This process's environment, tracing on towards `endpoint` (a batch every 200 ms)."""
    inherited = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "CELERY_BROKER_URL"} and not k.startswith("OTEL_")
    }
    return {**inherited, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200"}


@pytest.fixture
def traced_gunicorn(
    project_scratch_dir: Path, acme: Tenant, receiver: tuple[str, Received]
) -> Iterator[str]:
    """The production configuration on the test database, one worker, embeddings from a
    loopback stub, tracing on towards the receiver (a batch exported every 200 ms)."""
    params = connection.settings_dict
    host = quote(str(params["HOST"]), safe="")
    listener = listening_socket()
    port = listener.getsockname()[1]
    with StubEmbeddings() as embeddings:
        env = {
            **_tracing_environment(receiver[0]),
            "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
            "DATABASE_URL": f"postgres://{params['USER']}@{host}:{params['PORT']}/{params['NAME']}",
            "DEBUG": "0",
            "SECRET_KEY": settings.SECRET_KEY,
            "MEMORYHUB_KEK": settings.MEMORYHUB_KEK,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "MEMORYHUB_EMBEDDING_PROVIDER": "openai",
            "MEMORYHUB_EMBEDDING_URL": embeddings.url,
            "PROMETHEUS_MULTIPROC_DIR": str(project_scratch_dir / "multiproc"),
        }
        log_path = project_scratch_dir / "gunicorn.log"
        with log_path.open("w") as log, listener:
            process = subprocess.Popen(
                [
                    sys.executable, "-m", "gunicorn", "memoryhub.wsgi:application",
                    "--workers", "1", "--bind", f"fd://{listener.fileno()}",
                    "--timeout", "60", "--log-level", "warning",
                ],
                cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
                pass_fds=(listener.fileno(),),
            )  # fmt: skip
        base_url = f"http://127.0.0.1:{port}"
        try:
            _wait_until_healthy(base_url, process, log_path)
            yield base_url
        finally:
            stop_process(process)


def _wait_until_healthy(base_url: str, process: subprocess.Popen[str], log_path: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        assert process.poll() is None, log_path.read_text()[-3000:]
        try:
            if httpx.get(f"{base_url}/healthz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "gunicorn did not become healthy within 90 s"
        time.sleep(0.3)


def _exercise(base_url: str, acme: Tenant) -> None:
    """Write, recall, and read the subject through its URLs."""
    api = httpx.Client(
        base_url=f"{base_url}/api/v1/namespaces/{acme.slug}/",
        headers={"Authorization": f"Bearer {acme.raw_key}"},
        timeout=30,
    )
    created = api.post("memories", json={"subject": SUBJECT, "content": CONTENT})
    assert created.status_code == 201, created.text
    recalled = api.post(
        f"recall?asked_for={SUBJECT}", json={"subject": SUBJECT, "query": QUERY, "k": 3}
    )
    assert recalled.status_code == 200, recalled.text
    assert recalled.json()["results"][0]["memory"]["content"] == CONTENT
    assert api.get(f"subjects/{SUBJECT}").status_code == 200
    assert api.get(f"subjects/{SUBJECT}/export").status_code == 200
    assert api.get("memories", params={"subject": SUBJECT}).status_code == 200


def _wait_for_spans(received: Received, names: set[str]) -> list[Span]:
    deadline = time.monotonic() + 30
    while True:
        spans = received.spans()
        if names <= {span.name for span in spans}:
            time.sleep(1)  # the batch of the requests' last spans
            return received.spans()
        assert time.monotonic() < deadline, f"not exported: {names - {s.name for s in spans}}"
        time.sleep(0.2)


def _attribute(span: Span, key: str) -> Any:
    for attribute in span.attributes:
        if attribute.key == key:
            return _value(attribute.value)
    return None


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def _texts(attributes: Any) -> Iterator[str]:
    """Every key and value of these attributes, as text."""
    for attribute in attributes:
        assert isinstance(attribute, KeyValue)
        yield attribute.key
        yield str(_value(attribute.value))


def _everything_exported(received: Received) -> Iterator[tuple[str, str]]:
    """(where, text) for every name and value of every export received."""
    for request in received.requests:
        for resource_spans in request.resource_spans:
            for text in _texts(resource_spans.resource.attributes):
                yield "resource", text
            for scope_spans in resource_spans.scope_spans:
                yield "scope", scope_spans.scope.name
                for span in scope_spans.spans:
                    yield from _span_texts(span)


def _span_texts(span: Span) -> Iterator[tuple[str, str]]:
    yield "span name", span.name
    yield f"status of {span.name}", span.status.message
    for text in _texts(span.attributes):
        yield f"attribute of {span.name}", text
    for event in span.events:
        yield f"event of {span.name}", event.name
        for text in _texts(event.attributes):
            yield f"event attribute of {span.name}", text
    for link in span.links:
        for text in _texts(link.attributes):
            yield f"link of {span.name}", text


def _descendants(spans: list[Span], root: Span) -> list[Span]:
    children: dict[bytes, list[Span]] = {}
    for span in spans:
        children.setdefault(span.parent_span_id, []).append(span)
    found, frontier = [], [root]
    while frontier:
        below = children.get(frontier.pop().span_id, [])
        found.extend(below)
        frontier.extend(below)
    return found


def test_a_recall_is_traced_as_a_tree_of_route_templates_and_steps(
    traced_gunicorn: str, acme: Tenant, receiver: tuple[str, Received]
) -> None:
    _, received = receiver
    _exercise(traced_gunicorn, acme)
    spans = _wait_for_spans(received, {"recall.log", f"GET {SUBJECT_ROUTE}/export"})

    (recall,) = [span for span in spans if span.name == "recall"]
    (server,) = [span for span in spans if span.span_id == recall.parent_span_id]
    assert server.kind == Span.SpanKind.SPAN_KIND_SERVER
    assert server.name == f"POST {RECALL_ROUTE}"
    assert _attribute(server, "http.route") == RECALL_ROUTE
    assert server.trace_id == recall.trace_id
    children = [span for span in spans if span.parent_span_id == recall.span_id]
    assert {span.name for span in children} >= RECALL_CHILDREN | {"recall.log"}
    below = _descendants(spans, recall)
    statements = [span for span in below if _attribute(span, "db.system") == "postgresql"]
    assert statements, "no database span under the recall"
    assert all(span.kind == Span.SpanKind.SPAN_KIND_CLIENT for span in statements)
    assert any("SELECT" in str(_attribute(span, "db.statement")) for span in statements)
    steps = {span.span_id: span.name for span in children}
    with_statements = {steps.get(span.parent_span_id) for span in statements}
    assert {"recall.candidates", "recall.log"} <= with_statements
    subject_reads = [span for span in spans if span.name == f"GET {SUBJECT_ROUTE}"]
    assert [_attribute(span, "http.route") for span in subject_reads] == [SUBJECT_ROUTE]


def test_no_planted_string_leaves_the_process(
    traced_gunicorn: str, acme: Tenant, receiver: tuple[str, Received]
) -> None:
    _, received = receiver
    _exercise(traced_gunicorn, acme)
    spans = _wait_for_spans(received, {"recall.log", f"GET {SUBJECT_ROUTE}/export"})
    assert any(_attribute(span, "db.statement") for span in spans)  # statements were traced

    planted = [SUBJECT, CONTENT, QUERY, "quokka-planted", "wombat-planted", acme.raw_key]
    exported = list(_everything_exported(received))
    for where, text in exported:
        for secret in planted:
            assert secret not in text, f"{secret!r} in the {where}: {text[:300]!r}"
        assert not A_VECTOR.search(text), f"a vector in the {where}: {text[:300]!r}"
    raw = b"".join(received.bodies)
    for secret in planted:
        assert secret.encode() not in raw, f"{secret!r} in the exported bytes"
    assert not {attribute.key for span in spans for attribute in span.attributes} & URL_ATTRIBUTES
    services = {
        str(_value(attribute.value))
        for request in received.requests
        for resource_spans in request.resource_spans
        for attribute in resource_spans.resource.attributes
        if attribute.key == "service.name"
    }
    assert services == {"memoryhub"}


@pytest.fixture
def traced_worker(redis_url: str, receiver: tuple[str, Received]) -> Iterator[str]:
    """A `celery worker` (prefork, one child) on Redis, on a queue of its own, tracing on."""
    queue = f"traces-{os.getpid()}-{time.monotonic_ns()}"
    env = {
        **_tracing_environment(receiver[0]),
        "CELERY_BROKER_URL": redis_url,
        "CELERY_RESULT_BACKEND": redis_url,
    }
    process = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "--concurrency=1",
            "--queues", queue, "--without-gossip", "--without-mingle", "--loglevel=WARNING",
        ],
        cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        yield queue
    finally:
        stop_process(process)


@pytest.mark.redis
def test_a_celery_task_is_traced_without_its_arguments(
    traced_worker: str, redis_url: str, receiver: tuple[str, Received]
) -> None:
    _, received = receiver
    # Not the current app: the project's tasks, sent by the tests after this one, must keep
    # finding the project's app (and its producer pool, which closing this one closes).
    client = Celery(broker=redis_url, backend=redis_url, set_as_current=False)
    client.conf.update(task_serializer="json", accept_content=["json"], result_serializer="json")
    try:
        result = client.send_task("memoryhub.ping", args=[SUBJECT], queue=traced_worker)
        assert result.get(timeout=60)["pong"] == SUBJECT
    finally:
        client.close()
    spans = _wait_for_spans(received, {"run/memoryhub.ping"})
    (run,) = [span for span in spans if span.name == "run/memoryhub.ping"]
    assert run.kind == Span.SpanKind.SPAN_KIND_CONSUMER
    assert _attribute(run, "celery.task_name") == "memoryhub.ping"
    for where, text in _everything_exported(received):
        assert SUBJECT not in text, f"the task's argument in the {where}: {text[:300]!r}"
    assert SUBJECT.encode() not in b"".join(received.bodies)
