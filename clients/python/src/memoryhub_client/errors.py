"""The API's one error shape, `{"error": {"code", "message", "details"}}`, as exceptions.

Each HTTP status the API answers with has its class; the `code` says more (for example
409 is `conflict`, `idempotency_conflict` or `subject_paused`). Catch `MemoryHubError` for
all of them.
"""

from __future__ import annotations

import email.utils
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from memoryhub_client.results import Job


class MemoryHubError(Exception):
    """Anything the SDK could not do. `status_code` is None when no answer came back."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        code: str = "",
        details: dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.code = code
        self.details: dict[str, Any] = details or {}
        self.request_id = request_id

    def __str__(self) -> str:
        status = f"{self.status_code} " if self.status_code is not None else ""
        code = f"{self.code}: " if self.code else ""
        return f"{status}{code}{self.message}"


class ValidationError(MemoryHubError):
    """400: the request is not valid; `details` maps each field to its problems."""


class AuthenticationFailed(MemoryHubError):
    """401: no key, or an invalid, revoked or expired one (or a key sent in the URL)."""


class PermissionDenied(MemoryHubError):
    """403: the key lacks the permission the endpoint needs."""


class NotFound(MemoryHubError):
    """404: missing, or outside the key's namespaces (the API does not tell them apart)."""


class Conflict(MemoryHubError):
    """409: `conflict`, `idempotency_conflict` (same key, other body), `subject_paused`."""


class PayloadTooLarge(MemoryHubError):
    """413: content, a document, a batch of messages or the body is over its limit."""


class Unprocessable(MemoryHubError):
    """422: understood but refused, e.g. `pii_rejected` or `budget_too_small`."""


class RateLimited(MemoryHubError):
    """429: the key's request or work rate is spent; try again after `retry_after` seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(MemoryHubError):
    """5xx: the server failed."""


class ServiceUnavailable(ServerError):
    """503: a service the server depends on is unavailable; worth trying again later."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class NetworkError(MemoryHubError):
    """No answer: the connection failed or timed out."""


class UnexpectedResponse(MemoryHubError):
    """An answer the SDK does not understand (not JSON, or not the documented shape)."""


class JobFailed(MemoryHubError):
    """A job waited for ended `failed`; `job.error` says why."""

    def __init__(self, job: Job) -> None:
        super().__init__(f"Job {job.id} failed: {job.error}", code="job_failed")
        self.job = job


class JobTimeout(MemoryHubError):
    """A job waited for did not finish in time; `job` is its last state."""

    def __init__(self, job: Job, timeout: float) -> None:
        super().__init__(
            f"Job {job.id} is still {job.status} after {timeout:g} s.", code="job_timeout"
        )
        self.job = job


class WebhookVerificationFailed(MemoryHubError):
    """A webhook request that is not MemoryHub's, or not as sent (`verify_webhook`); `code`
    says why: `missing_headers`, `invalid_secret`, `invalid_timestamp`, `timestamp_too_old`,
    `timestamp_too_new`, `no_matching_signature` or `invalid_payload`."""


_BY_STATUS: dict[int, type[MemoryHubError]] = {
    400: ValidationError,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: Unprocessable,
    429: RateLimited,
    503: ServiceUnavailable,
}


def error_from_response(response: httpx.Response) -> MemoryHubError:
    """The exception for an answer that is not a success, read from the one error shape
    (or, from a proxy's page that is not in it, the status alone)."""
    status = response.status_code
    code, message = f"http_{status}", response.reason_phrase or "HTTP error"
    details: Any = {}
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
        details = error.get("details") or {}
    except (ValueError, KeyError, TypeError):
        pass
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else MemoryHubError)
    kwargs: dict[str, Any] = {
        "status_code": status,
        "code": code,
        "details": details if isinstance(details, dict) else {"detail": details},
        "request_id": response.headers.get("X-Request-ID"),
    }
    if cls in (RateLimited, ServiceUnavailable):
        kwargs["retry_after"] = retry_after_seconds(response.headers.get("Retry-After"))
    return cls(message, **kwargs)


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After in seconds: a number of seconds, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when: datetime = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)
