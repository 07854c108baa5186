"""JSON bodies within bounds, refused in the one error shape before any view sees them."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from memoryhub.json_input import MAX_DEPTH, JsonInputError, json_loads

__all__ = ["MAX_DEPTH", "BoundedJSONParser"]


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser through the one JSON guard (`memoryhub.json_input`): what is not
    JSON, nests beyond MAX_DEPTH levels, or holds text that is not valid Unicode or a number
    no float holds is a 400 `parse_error`, before any view sees it."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        raw = stream.read() if stream is not None else b""
        try:
            # bytes.decode takes text encodings only: no charset decompresses the body.
            text = raw.decode(encoding)
        except LookupError:
            raise exceptions.ParseError(f'Unsupported charset "{encoding}".') from None
        except UnicodeDecodeError:
            raise exceptions.ParseError(f"JSON parse error - not {encoding} text.") from None
        try:
            return json_loads(text)
        except JsonInputError as refused:
            raise exceptions.ParseError(f"JSON parse error - {refused}.") from None
