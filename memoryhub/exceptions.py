"""Errors that services raise on purpose; the API turns them into the one error shape.

Services and selectors import these, never anything from the HTTP layer.
"""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A refusal the caller can act on: bad input, a conflict, a policy."""

    status_code = 400
    code = "validation_error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.code
        self.details = details or {}
        if status_code is not None:
            self.status_code = status_code


class NotFound(ApplicationError):
    """The object does not exist *for this caller*: outsiders and missing rows look alike."""

    status_code = 404
    code = "not_found"
