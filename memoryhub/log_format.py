"""The two log formats (MEMORYHUB_LOG_FORMAT): `text`, one readable line, and `json`, one
JSON object a line for a log collector. Both carry the trace and span ids while a span
records (memoryhub/tracing.py), so a line leads to its trace."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime


class TextFormatter(logging.Formatter):
    """`time level logger message`; while a span records, `trace_id=… span_id=…` stand
    before the message (`RequestContextFilter` puts them on the record)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(trace_ids)s%(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        trace_id = getattr(record, "trace_id", None)
        span_id = getattr(record, "span_id", None)
        record.trace_ids = f"trace_id={trace_id} span_id={span_id} " if trace_id else ""
        return super().formatMessage(record)


class JsonLinesFormatter(logging.Formatter):
    """`{"timestamp", "level", "logger", "message"}`, with `request_id`, `trace_id` and
    `span_id` when known (`RequestContextFilter`), and a failure's traceback as `exception`
    (redacted by `SecretsFilter` first, as the text format's). A record's other attributes are
    left out: what a caller passes in `extra` is not a field of the line. Newlines inside a message
    are escaped, so one record is always one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, str] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for field in ("request_id", "trace_id", "span_id"):
            value = getattr(record, field, None)
            if value:
                line[field] = str(value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line)
