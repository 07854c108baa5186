"""What a span may carry out of the process (memoryhub/tracing.py): every span, whichever
library made it, is copied without the attributes that could hold a raw URL (a subject's
external id is a path segment; a query string may hold anything), captured headers
(credentials) or statement parameters (ciphertext, ids, vectors); an exception event keeps
only the exception's type (its message and traceback may quote values: a constraint error
quotes the row's), and a status keeps its code, not its description (the error's message).
The route template (`http.route`, and the span's name) still says which endpoint served.

Imports the SDK: imported only once tracing is on.
"""

from __future__ import annotations

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import Status
from opentelemetry.util.types import Attributes, AttributeValue

DROPPED_ATTRIBUTES = frozenset(
    {
        "http.target",
        "http.url",
        "url.path",
        "url.query",
        "url.full",
        "db.statement.parameters",
        "celery.args",
        "celery.kwargs",
    }
)
DROPPED_PREFIXES = ("http.request.header.", "http.response.header.", "db.query.parameter.")
EXCEPTION_ATTRIBUTES_KEPT = frozenset({"exception.type", "exception.escaped"})


def scrubbed(span: ReadableSpan) -> ReadableSpan:
    """A copy of `span` fit to leave the process (see the module's docstring)."""
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=_kept(span.attributes),
        events=[_scrubbed_event(event) for event in span.events],
        links=span.links,
        kind=span.kind,
        status=Status(span.status.status_code),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _scrubbed_event(event: Event) -> Event:
    attributes = event.attributes or {}
    if event.name == "exception":
        kept = {k: v for k, v in attributes.items() if k in EXCEPTION_ATTRIBUTES_KEPT}
    else:
        kept = _kept(attributes)
    return Event(event.name, kept, event.timestamp)


def _kept(attributes: Attributes) -> dict[str, AttributeValue]:
    return {
        key: value
        for key, value in (attributes or {}).items()
        if key not in DROPPED_ATTRIBUTES and not key.startswith(DROPPED_PREFIXES)
    }


class ScrubbingSpanProcessor(SpanProcessor):
    """Hands `inner` (the batch processor that exports) a scrubbed copy of each ended span:
    nothing an instrumentation recorded reaches the export queue as it was recorded."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.inner.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.inner.on_end(scrubbed(span))

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)
