"""What a log line may know of the work it belongs to: the id of the request being served
(set by `request_id_middleware` for the request's duration) and the ids of the current trace
and span, when an OpenTelemetry span is recording (the API is a dependency; nothing records
until memoryhub/tracing.py sets the SDK up). Ids only: never a request's content.
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from types import ModuleType

request_id: ContextVar[str | None] = ContextVar("memoryhub_request_id", default=None)


@functools.cache
def _trace_api() -> ModuleType | None:
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace


def current_trace_ids() -> tuple[str | None, str | None]:
    """The current span's trace id (32 hex digits) and span id (16), or (None, None):
    OpenTelemetry not installed, no span, or a span that is not valid (the API without an
    SDK). The one place log lines take them from."""
    trace = _trace_api()
    if trace is None:
        return None, None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None, None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")
