"""JSON bodies within bounds, refused in the one error shape before any view sees them."""

from __future__ import annotations

import math
from typing import Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

# Deeper than any real request needs, and far below what makes a parser or the database's
# jsonb input recurse out of stack.
MAX_DEPTH = 64


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, refusing (400, `parse_error`) what would otherwise fail deep inside:
    nesting beyond MAX_DEPTH levels, and text that is not valid Unicode (a lone surrogate
    such as "\\ud800" parses in Python but PostgreSQL cannot store it)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(
                f"JSON parse error - nested deeper than {MAX_DEPTH} levels."
            ) from None
        problem = json_problem(data)
        if problem:
            raise exceptions.ParseError(f"JSON parse error - {problem}.")
        return data


def json_problem(value: Any) -> str:
    """What makes a parsed JSON value unstorable ('' when nothing): too deep, a string (key
    or value) that is not valid Unicode, or a number too large for a float ("1e999" parses
    as infinity, which JSON cannot hold). Walks without recursion."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            if not _is_unicode(item):
                return "text with a lone surrogate (not valid Unicode)"
            continue
        if isinstance(item, float) and not math.isfinite(item):
            return "a number too large to represent"
        if not isinstance(item, dict | list):
            continue
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, dict):
            for key, child in item.items():
                if not _is_unicode(key):
                    return "a key with a lone surrogate (not valid Unicode)"
                pending.append((child, depth + 1))
        else:
            pending.extend((child, depth + 1) for child in item)
    return ""


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
