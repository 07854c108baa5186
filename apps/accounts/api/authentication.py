"""`Authorization: Bearer <key>` authentication, throttling and permission checks for the API."""

from __future__ import annotations

import re
import time
from typing import Any, ClassVar, cast

from django.conf import settings
from django.core.cache import cache
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from apps.accounts.models import ApiKey
from apps.accounts.selectors import api_key_for_raw, api_key_prefix_of
from apps.accounts.services import KEY_PREFIX, api_key_touch
from apps.audit.actors import Actor
from apps.audit.services import audit_denied
from memoryhub.client_address import client_address

# A raw key anywhere in the path, or a credential-looking query parameter: a key in a URL
# ends up in logs and browser history, so such requests are refused outright.
_KEY_IN_TEXT = re.compile(rf"{KEY_PREFIX}[0-9a-f]{{12}}_")
_CREDENTIAL_PARAMS = {
    "api_key",
    "apikey",
    "key",
    "token",
    "access_token",
    "authorization",
    "bearer",
}


def _refuse(request: Request, *, reason: str, claimed_id: str = "") -> None:
    """Count a failed attempt per client address; audit it unless the address is over its
    limit, in which case the answer is 429 and nothing is written (no audit-log flooding)."""
    address = client_address(request) or "unknown"
    key = f"authfail:{address}"
    cache.add(key, 0, timeout=60)
    try:
        failures = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=60)
        failures = 1
    if failures > settings.MEMORYHUB_AUTH_FAILURES_PER_MINUTE:
        raise exceptions.Throttled(wait=60, detail="Too many failed authentication attempts.")
    audit_denied(
        actor=Actor.anonymous(request, claimed_id=claimed_id),
        action="api.authenticate",
        reason=reason,
    )


def request_api_key(request: Request) -> ApiKey:
    """The key a request was authenticated with, typed: for views whose authentication is
    `ApiKeyAuthentication` and that require `IsAuthenticated`, `request.auth` is an ApiKey."""
    return cast(ApiKey, request.auth)


class ApiKeyAuthentication(BaseAuthentication):
    # The words an Authorization header may start with (lower case). A subclass for another
    # client's convention adds its own, on its own paths only (Mem0's `Token`: /mem0/).
    keywords: ClassVar[tuple[bytes, ...]] = (b"bearer",)

    def authenticate(self, request: Request) -> tuple[ApiKey, ApiKey] | None:
        if _credential_in_url(request):
            _refuse(request, reason="key_in_url")
            raise exceptions.AuthenticationFailed(
                "API keys are never accepted in the URL; send 'Authorization: Bearer <key>'. "
                "Revoke a key that was sent in a URL.",
                code="key_in_url",
            )
        header = get_authorization_header(request).split()
        if not header:
            return None
        if header[0].lower() not in self.keywords or len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "Use 'Authorization: Bearer <key>'.", code="authentication_failed"
            )
        raw = header[1].decode("latin-1")
        api_key = api_key_for_raw(raw)
        if api_key is None:
            _refuse(
                request, reason="invalid_revoked_or_expired_key", claimed_id=api_key_prefix_of(raw)
            )
            raise exceptions.AuthenticationFailed(
                "Invalid, revoked or expired API key.", code="authentication_failed"
            )
        api_key_touch(api_key=api_key)
        return api_key, api_key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="memoryhub"'


def _credential_in_url(request: Request) -> bool:
    if _KEY_IN_TEXT.search(request.path):
        return True
    for name, values in request.query_params.lists():
        if name.strip().lower() in _CREDENTIAL_PARAMS:
            return True
        # Anywhere in a name or a value: after a space, inside other text, one of several.
        if any(_KEY_IN_TEXT.search(text) for text in (name, *values)):
            return True
    return False


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Requests per API key, at MEMORYHUB_API_RATE (e.g. '1200/min')."""

    scope = "api_key"

    def get_rate(self) -> str | None:
        return settings.MEMORYHUB_API_RATE

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not isinstance(request.auth, ApiKey):
            return None
        return f"throttle:api_key:{request.auth.prefix}"


class WorkThrottle(SimpleRateThrottle):
    """Work per API key, at MEMORYHUB_API_WORK_RATE (e.g. '20000/hour'): the memories, turns
    and document chunks a key sends to be embedded, counted in the shared cache in fixed
    windows. A request's whole work is taken or none of it: one that would pass the limit
    is refused (429, with Retry-After) and counts nothing."""

    scope = "api_key_work"

    def __init__(self) -> None:  # no per-request rate lookup: the setting is the rate
        self.rate = settings.MEMORYHUB_API_WORK_RATE
        self.num_requests, self.duration = self.parse_rate(self.rate)

    def take(self, api_key: ApiKey, items: int) -> None:
        if items <= 0 or self.num_requests is None or self.duration is None:
            return
        window = int(time.time() // self.duration)
        key = f"throttle_work_{api_key.pk}_{window}"
        cache.add(key, 0, timeout=self.duration)
        try:
            used = cache.incr(key, items)
        except ValueError:  # the window expired between add and incr
            cache.set(key, items, timeout=self.duration)
            used = items
        if used > self.num_requests:
            cache.decr(key, items)
            wait = self.duration - time.time() % self.duration
            raise exceptions.Throttled(
                wait=wait,
                detail=f"This key may send {self.num_requests} items to embed per "
                f"{self.duration} s; this request has {items}, and "
                f"{max(self.num_requests - used + items, 0)} are left in this window.",
            )


def work_take(request: Request, items: int) -> None:
    """Count `items` of work against the request's key (see WorkThrottle)."""
    WorkThrottle().take(request_api_key(request), items)
