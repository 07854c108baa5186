"""Tracing's set-up and scrubber, in this process: without an OTLP endpoint nothing is set up
(the recall's spans stay no-ops, no middleware, no patched driver); with one, what a span
carries out is scrubbed. The export itself is tested against a real receiver in
tests/monitoring/test_traces.py."""

from __future__ import annotations

import psycopg
import pytest
from django.conf import settings
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from apps.recall import search
from memoryhub import tracing
from memoryhub.trace_scrubbing import ScrubbingSpanProcessor

SUBJECT = "subject-planted-41d0aa"


def test_it_sets_nothing_up_without_an_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in tracing.ENDPOINT_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    assert tracing.set_up() is False
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)
    with search.tracer.start_as_current_span("recall") as span:
        assert not span.is_recording()
    assert not any("opentelemetry" in entry for entry in settings.MIDDLEWARE)
    assert not hasattr(psycopg.connect, "__wrapped__")


def test_it_is_on_with_an_endpoint_unless_the_sdk_is_disabled() -> None:
    assert not tracing.enabled({})
    assert not tracing.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": " "})
    assert tracing.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert tracing.enabled({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"})
    assert not tracing.enabled(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}
    )


def _exported_by_a_scrubbed_provider(
    attributes: dict[str, str], failure: Exception | None = None
) -> dict[str, object]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(ScrubbingSpanProcessor(SimpleSpanProcessor(exporter)))
    span = provider.get_tracer("tests").start_span("GET api/v1/x", attributes=attributes)
    if failure is not None:
        span.record_exception(failure)
        span.set_status(trace.Status(trace.StatusCode.ERROR, f"{type(failure).__name__}: boom"))
    span.end()
    (exported,) = exporter.get_finished_spans()
    return {
        "attributes": dict(exported.attributes or {}),
        "events": [dict(event.attributes or {}) for event in exported.events],
        "status": exported.status.description,
    }


def test_the_scrubber_drops_raw_urls_headers_and_parameters() -> None:
    exported = _exported_by_a_scrubbed_provider(
        {
            "http.route": "api/v1/namespaces/<slug:namespace>/subjects/<str:external_id>",
            "http.target": f"/api/v1/namespaces/acme/subjects/{SUBJECT}",
            "url.path": f"/api/v1/namespaces/acme/subjects/{SUBJECT}",
            "url.query": f"subject={SUBJECT}",
            "http.url": f"http://h/api/v1/namespaces/acme/subjects/{SUBJECT}",
            "url.full": f"http://h/api/v1/namespaces/acme/subjects/{SUBJECT}",
            "http.request.header.authorization": "Bearer mh_secret",
            "db.statement.parameters": f"('{SUBJECT}',)",
            "db.statement": "SELECT 1 FROM subjects WHERE external_id = %s",
        }
    )
    assert exported["attributes"] == {
        "http.route": "api/v1/namespaces/<slug:namespace>/subjects/<str:external_id>",
        "db.statement": "SELECT 1 FROM subjects WHERE external_id = %s",
    }


def test_the_scrubber_keeps_only_an_exceptions_type() -> None:
    failure = ValueError(f"Key (external_id)=({SUBJECT}) already exists.")
    exported = _exported_by_a_scrubbed_provider({}, failure)
    assert exported["events"] == [{"exception.type": "ValueError", "exception.escaped": "False"}]
    assert exported["status"] is None
    assert SUBJECT not in repr(exported)
