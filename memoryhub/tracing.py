"""OpenTelemetry traces: off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces-only
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set; then spans go to that collector over OTLP/HTTP.

`set_up()` runs once in each process that serves or works: memoryhub/wsgi.py and asgi.py
(so `runserver` too), each gunicorn worker after the fork (gunicorn.conf.py: a batch
processor's thread does not survive a fork), and each Celery worker process
(`worker_process_init`, memoryhub/celery.py). Without the variable it returns at once: no
SDK imported, no instrumentation patched, nothing sent. The code that makes spans of its own
(recall) uses opentelemetry-api's tracer, which does nothing until this has run.

Traced: Django requests (named by route template), psycopg statements (their parameterized
text, never the parameters), Celery tasks (names and ids, never arguments). Every span is
scrubbed before it is queued for export (memoryhub/trace_scrubbing.py). The standard
variables apply: `OTEL_SERVICE_NAME` (default "memoryhub"), `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, `OTEL_EXPORTER_OTLP_HEADERS`, `_COMPRESSION`, `_TIMEOUT`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import psycopg

if TYPE_CHECKING:  # the SDK is imported only once tracing is on
    from opentelemetry.sdk.trace import TracerProvider

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
DEFAULT_SERVICE_NAME = "memoryhub"

_set_up_in_this_process = False
# psycopg's own Cursor (values sent apart from the statement), which apps/recall/statements.py
# makes apart from the connection's factory: traced like every other cursor once set up.
_server_binding_cursor: type[psycopg.Cursor[Any]] = psycopg.Cursor


def enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether traces are to be exported: an OTLP endpoint set, and the SDK not disabled."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def set_up() -> bool:
    """Turn tracing on in this process when `enabled()`: the tracer provider (the OTLP/HTTP
    exporter behind a batch processor, behind the scrubber) and the Django, psycopg and
    Celery instrumentations. Once per process: later calls change nothing. Returns whether
    traces are exported. Call it before Django builds its handler (the instrumentation adds
    a middleware) and after any fork."""
    global _set_up_in_this_process
    if _set_up_in_this_process:
        return True
    if not enabled():
        return False
    from opentelemetry import trace

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    provider = _tracer_provider()
    trace.set_tracer_provider(provider)
    _instrument(provider)
    _set_up_in_this_process = True
    return True


def server_binding_cursor() -> type[psycopg.Cursor[Any]]:
    """The class of a server-binding cursor: psycopg's Cursor, traced when tracing is on."""
    return _server_binding_cursor


def _tracer_provider() -> TracerProvider:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from memoryhub.trace_scrubbing import ScrubbingSpanProcessor

    resource = Resource.create()  # reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    provider = TracerProvider(resource=resource)  # reads OTEL_TRACES_SAMPLER
    exporter = OTLPSpanExporter()  # reads OTEL_EXPORTER_OTLP_*
    provider.add_span_processor(ScrubbingSpanProcessor(BatchSpanProcessor(exporter)))
    return provider


def _instrument(provider: TracerProvider) -> None:
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    DjangoInstrumentor().instrument(tracer_provider=provider, is_sql_commentor_enabled=False)
    # Parameters stay out: they are ciphertext, ids and vectors.
    PsycopgInstrumentor().instrument(
        tracer_provider=provider, enable_commenter=False, capture_parameters=False
    )
    CeleryInstrumentor().instrument(tracer_provider=provider)
    global _server_binding_cursor
    # The instrumentation's own cursor class (it has no public one for a cursor made apart
    # from the connection's factory).
    from opentelemetry.instrumentation.psycopg import _new_cursor_factory

    _server_binding_cursor = _new_cursor_factory(
        tracer_provider=provider, base_factory=psycopg.Cursor
    )
