"""The one way untrusted JSON text comes in: bounded before it is parsed.

Every JSON input that a caller, a file or a model controls goes through `json_loads`: the
REST API's parser, MCP over HTTP and stdio, eval-set uploads, the LLM extractor's answers,
and any input added later (import files, webhooks, manifests). Python's `json` recurses
once per nesting level, so a body nested a few thousand levels deep raises RecursionError,
which no `except ValueError` catches: here the depth is measured first, without recursion,
and the text is refused before the parser sees it.

Pure: imports no Django, so pure modules (the extractor) use it too.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# Deeper than any real request needs, and far below what makes a parser or the database's
# jsonb input recurse out of stack.
MAX_DEPTH = 64

# A JSON string (its escapes included): brackets inside one do not nest.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class JsonInputError(ValueError):
    """Untrusted JSON text refused. Its message says why, in words fit for the caller; its
    `code` says which kind of refusal, for callers that word it themselves: "not_json"
    (malformed, or not UTF-8), "too_deep", or "unstorable" (a lone surrogate, a number no
    float holds)."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


def json_loads(text: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH) -> Any:
    """The value of untrusted JSON `text` (bytes are read as UTF-8), or JsonInputError.

    The nesting depth is checked on the raw text before parsing, so the work done for a deep
    body stops at the first bracket past `max_depth`; the parsed value is then checked as
    `json_problem` says."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise JsonInputError("not UTF-8 text", code="not_json") from None
    too_deep = f"nested deeper than {max_depth} levels"
    if nesting_exceeds(text, max_depth):
        raise JsonInputError(too_deep, code="too_deep")
    try:
        value = json.loads(text)
    except RecursionError:  # unreachable after the check above; kept as a last line
        raise JsonInputError(too_deep, code="too_deep") from None
    except ValueError as error:
        raise JsonInputError(f"not JSON ({_reason(error)})", code="not_json") from None
    problem = json_problem(value, max_depth=max_depth)
    if problem:
        raise JsonInputError(problem, code="too_deep" if problem == too_deep else "unstorable")
    return value


def nesting_exceeds(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects in `text` nest deeper than `max_depth`, brackets inside
    strings aside. Linear, without recursion, and it stops at the first level too deep."""
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False


def json_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str:
    """What makes a parsed JSON value unstorable ('' when nothing): too deep, a string (key
    or value) that is not valid Unicode (a lone surrogate such as "\\ud800" parses, but
    PostgreSQL cannot store it), or a number too large for a float ("1e999" parses as
    infinity, which JSON cannot hold; NaN likewise). Walks without recursion."""
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
        if depth > max_depth:
            return f"nested deeper than {max_depth} levels"
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


def _reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno} column {error.colno}"
    return "not valid text"
