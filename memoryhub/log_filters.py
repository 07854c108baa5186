"""Logging filters: what must never reach a log line."""

from __future__ import annotations

import logging

from memoryhub import request_context
from memoryhub.error_reports import redact

_FORMATTER = logging.Formatter()


class SecretsFilter(logging.Filter):
    """Blots out of a record's message, exception and stack every secret the settings hold,
    a password inside a URL, and a privacy-portal link's token (a bearer secret until spent;
    Django's request and server logs would write the path it sits in): `error_reports.redact`.
    The exception is formatted here, once, so the handler prints the redacted text."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = _FORMATTER.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class RequestContextFilter(logging.Filter):
    """Puts `request_id`, `trace_id` and `span_id` on every record (None when unknown) for
    the formatters. The request id is the one of the request being served, or, for the line
    Django's handler writes once the middleware has returned (a 404, a 500), the one its
    request carries."""

    def filter(self, record: logging.LogRecord) -> bool:
        current = request_context.request_id.get()
        if current is None:
            # django.request's records carry the request; django.server's a socket.
            carried = getattr(getattr(record, "request", None), "request_id", None)
            current = carried if isinstance(carried, str) else None
        record.request_id = current
        record.trace_id, record.span_id = request_context.current_trace_ids()
        return True
