"""Log lines: MEMORYHUB_LOG_FORMAT=json writes one JSON object a line, each line of a request
carries its id (the client's X-Request-ID, or a new one), and no line holds memory content."""

from __future__ import annotations

import copy
import io
import json
import logging
import logging.config
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client

from apps.memories.embeddings import OpenAICompatibleProvider, set_provider
from memoryhub import request_context
from memoryhub.log_filters import RequestContextFilter
from memoryhub.log_format import JsonLinesFormatter, TextFormatter
from tests.conftest import Tenant, run_python
from tests.embedder import DeterministicEmbedder

CANARY = "Zebulon keeps his spare key under the blue heron statue"


class JsonLog:
    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.splitlines()]


@pytest.fixture
def json_log() -> Iterator[JsonLog]:
    """The project's logging as settings configure it with MEMORYHUB_LOG_FORMAT=json, every
    level from DEBUG, into a buffer; the settings' own configuration again afterwards."""
    stream = io.StringIO()
    config = copy.deepcopy(django_settings.LOGGING)
    config["handlers"]["console"].update(formatter="json", stream=stream)
    config["root"]["level"] = "DEBUG"
    logging.config.dictConfig(config)
    try:
        yield JsonLog(stream)
    finally:
        logging.config.dictConfig(django_settings.LOGGING)


def record(message: str, **attributes: Any) -> logging.LogRecord:
    made = logging.LogRecord("memoryhub.tests", logging.INFO, __file__, 1, message, (), None)
    made.__dict__.update(attributes)
    return made


def test_a_json_line_has_the_time_level_logger_and_message() -> None:
    line = json.loads(JsonLinesFormatter().format(record("Loaded 3 memories\nin 2 s")))
    assert set(line) == {"timestamp", "level", "logger", "message"}
    assert line["timestamp"].endswith("Z")
    assert (line["level"], line["logger"]) == ("INFO", "memoryhub.tests")
    assert line["message"] == "Loaded 3 memories\nin 2 s"


def test_a_json_line_leaves_out_what_extra_carries() -> None:
    formatted = JsonLinesFormatter().format(record("stored", content=CANARY))
    assert CANARY not in formatted
    assert "\n" not in formatted


def test_a_json_line_carries_a_failure_as_one_line() -> None:
    try:
        raise ValueError("the reason")
    except ValueError:
        import sys

        failed = record("failed", exc_info=sys.exc_info())
    formatted = JsonLinesFormatter().format(failed)
    assert "\n" not in formatted
    assert "ValueError: the reason" in json.loads(formatted)["exception"]


def test_the_filter_names_the_request_being_served() -> None:
    token = request_context.request_id.set("req-42")
    try:
        filtered = record("hello")
        RequestContextFilter().filter(filtered)
    finally:
        request_context.request_id.reset(token)
    assert filtered.request_id == "req-42"  # type: ignore[attr-defined]
    assert filtered.trace_id is None  # type: ignore[attr-defined]  # no span recording


def test_the_trace_and_span_ids_are_the_current_spans() -> None:
    from opentelemetry import trace

    span = trace.NonRecordingSpan(trace.SpanContext(trace_id=0xABC, span_id=0x1, is_remote=False))
    with trace.use_span(span):
        assert request_context.current_trace_ids() == (f"{0xABC:032x}", f"{0x1:016x}")
    assert request_context.current_trace_ids() == (None, None)


def _under_a_span(message: str) -> logging.LogRecord:
    from opentelemetry import trace

    context = trace.SpanContext(trace_id=0xABC, span_id=0x1F, is_remote=False)
    with trace.use_span(trace.NonRecordingSpan(context)):
        made = record(message)
        RequestContextFilter().filter(made)
    return made


def test_a_json_line_under_a_span_carries_its_trace_and_span_ids() -> None:
    line = json.loads(JsonLinesFormatter().format(_under_a_span("recalled")))
    assert (line["trace_id"], line["span_id"]) == (f"{0xABC:032x}", f"{0x1F:016x}")


def test_a_text_line_under_a_span_carries_its_trace_and_span_ids() -> None:
    formatted = TextFormatter().format(_under_a_span("recalled"))
    assert formatted.endswith(f" trace_id={0xABC:032x} span_id={0x1F:016x} recalled")


def test_a_text_line_without_a_span_names_no_trace() -> None:
    plain = record("recalled")
    RequestContextFilter().filter(plain)
    formatted = TextFormatter().format(plain)
    assert formatted.endswith(" INFO memoryhub.tests recalled")
    assert "trace_id" not in formatted


@pytest.mark.django_db
def test_every_line_of_a_request_carries_the_id_the_client_sent(
    acme: Tenant, json_log: JsonLog
) -> None:
    response = acme.client.get(acme.url("memories/999999"), HTTP_X_REQUEST_ID="probe-7f3a")
    assert response.status_code == 404
    assert response["X-Request-ID"] == "probe-7f3a"
    lines = json_log.lines()
    assert lines, "the request logged nothing"
    assert {line.get("request_id") for line in lines} == {"probe-7f3a"}
    assert any(line["logger"] == "django.request" for line in lines)  # written after the middleware


@pytest.mark.django_db
def test_an_unusable_request_id_is_replaced(client: Client) -> None:
    for claimed in ["x" * 65, "no spaces", "new\nline", ""]:
        response = client.get("/healthz", HTTP_X_REQUEST_ID=claimed)
        assert response["X-Request-ID"] != claimed
        assert len(response["X-Request-ID"]) == 32  # a new one


@pytest.mark.django_db
def test_no_line_holds_memory_content_through_an_ingest_and_a_recall(
    acme: Tenant,
    json_log: JsonLog,
    django_capture_on_commit_callbacks,
    test_embedder: DeterministicEmbedder,
) -> None:
    # The ingest meets an embedding endpoint out of reach and logs it, with the texts it
    # was embedding at hand (they are stored all the same, for `reembed` to fill in).
    set_provider(OpenAICompatibleProvider(base_url="http://127.0.0.1:1", model="m", retries=0))
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": [{"role": "user", "content": CANARY}],
    }
    with django_capture_on_commit_callbacks(execute=True):
        stored = acme.client.post(
            acme.url("messages"), body, format="json", HTTP_X_REQUEST_ID="ingest-1"
        )
    assert stored.status_code == 201, stored.json()
    assert stored.json()["status"] == "succeeded"
    set_provider(test_embedder)
    recalled = acme.client.post(
        acme.url("recall"),
        {"subject": "u1", "query": CANARY},
        format="json",
        HTTP_X_REQUEST_ID="recall-1",
    )
    assert recalled.status_code == 200
    assert CANARY in json.dumps(recalled.json())  # it was stored and recalled
    lines = json_log.lines()  # every line parses
    assert any(
        line["request_id"] == "ingest-1" and "Embedding 1 memories failed" in line["message"]
        for line in lines
        if "request_id" in line
    )
    for word in ["Zebulon", "heron"]:
        assert word not in json_log.text


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_settings_write_json_lines_when_told() -> None:
    result = run_python(
        "import django, logging; django.setup(); logging.getLogger('memoryhub.x').warning('hi')",
        env={"MEMORYHUB_LOG_FORMAT": "json"},
    )
    assert result.returncode == 0, result.stderr
    line = json.loads(result.stderr.strip().splitlines()[-1])
    assert (line["logger"], line["message"]) == ("memoryhub.x", "hi")


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_settings_refuse_an_unknown_log_format() -> None:
    result = run_python("import django; django.setup()", env={"MEMORYHUB_LOG_FORMAT": "xml"})
    assert result.returncode != 0
    assert "MEMORYHUB_LOG_FORMAT='xml' is not one of" in result.stderr
