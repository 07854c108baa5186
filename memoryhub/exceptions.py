"""Errors that services raise on purpose; the API turns them into the one error shape.

Services and selectors import these, never anything from the HTTP layer.

A refusal is written once, in English, as a template marked for translation
(`gettext_noop("… %(name)s …")`) with its values in `params`. The API answers with
`message`, the English text, whatever the caller's language; a page shows `localized`, the
same refusal in the reader's language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext


class ApplicationError(Exception):
    """A refusal the caller can act on: bad input, a conflict, a policy."""

    status_code = 400
    code = "validation_error"

    def __init__(
        self,
        message: str,
        *,
        params: Mapping[str, object] | None = None,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        status_code: int | None = None,
    ) -> None:
        self.template = message
        self.params = dict(params or {})
        self.message = message % self.params if self.params else message
        super().__init__(self.message)
        self.code = code or self.code
        self.details = details or {}
        if status_code is not None:
            self.status_code = status_code

    @property
    def localized(self) -> str:
        """The refusal in the active language, for a person reading a page (English where
        the template has no translation)."""
        template = gettext(self.template)
        return template % self.params if self.params else template


class NotFound(ApplicationError):
    """The object does not exist *for this caller*: outsiders and missing rows look alike."""

    status_code = 404
    code = "not_found"
