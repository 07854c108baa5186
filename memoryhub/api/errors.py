"""One error shape for every API response: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from memoryhub.exceptions import ApplicationError

logger = logging.getLogger(__name__)

# The paths of machine clients: answered in JSON, never cached. /mem0/ is the API that Mem0's
# client calls (apps/mem0_bridge).
API_PATHS = ("/api/", "/mem0/")


def is_api_path(path: str) -> bool:
    return path.startswith(API_PATHS)


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _first_code(codes: Any) -> str | None:
    if isinstance(codes, str):
        return codes
    if isinstance(codes, list | tuple):
        for item in codes:
            found = _first_code(item)
            if found:
                return found
    if isinstance(codes, dict):
        for item in codes.values():
            found = _first_code(item)
            if found:
                return found
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's exception handler, rewritten to the one error shape."""
    headers: dict[str, str] = {}
    if isinstance(exc, ApplicationError):
        set_rollback()
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response(body_too_large(), status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )

    if not isinstance(exc, exceptions.APIException):
        return None  # a real bug: Django's 500 handler answers (in the error shape, see urls)

    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header  # type: ignore[attr-defined]
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))  # type: ignore[attr-defined]

    if isinstance(exc, exceptions.ValidationError):
        detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        body = error_body("validation_error", "The request is not valid.", detail)
    else:
        code = _first_code(exc.get_codes()) or exc.default_code
        body = error_body(code, str(exc.detail))
    set_rollback()
    return Response(body, status=exc.status_code, headers=headers)


def body_too_large() -> dict[str, Any]:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error_body(
        "body_too_large",
        f"The request body is larger than {limit} bytes.",
        {"body": {"limit_bytes": limit}},
    )


def json_bad_request(request: Any, exception: Exception | None = None) -> JsonResponse:
    """A request refused before any view (Django's 400s: a body too large, a bad host)."""
    if isinstance(exception, RequestDataTooBig):
        return JsonResponse(body_too_large(), status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    return JsonResponse(
        error_body("bad_request", "The request is malformed."), status=status.HTTP_400_BAD_REQUEST
    )


def json_not_found(request: Any, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("not_found", "Not found."), status=status.HTTP_404_NOT_FOUND)


def json_server_error(request: Any) -> JsonResponse:
    return JsonResponse(
        error_body("server_error", "The server could not complete the request."),
        status=status.HTTP_500_INTERNAL_SERVER_ERROR,
    )


# What a client is told to wait before it tries again while the database is out of reach.
DATABASE_RETRY_AFTER_SECONDS = 5


def json_database_unavailable(request: Any) -> JsonResponse:
    """The database could not be reached (restarting, failing over): try again shortly. The
    request's transaction was rolled back, so retrying a write cannot store it twice."""
    response = JsonResponse(
        error_body(
            "service_unavailable",
            "The database is unavailable for a moment; nothing was stored. Try again shortly.",
        ),
        status=status.HTTP_503_SERVICE_UNAVAILABLE,
    )
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    return response
