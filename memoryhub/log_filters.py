"""Logging filters: what must never reach a log line."""

from __future__ import annotations

import logging

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
