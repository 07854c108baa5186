"""Every request gets an id (the client's X-Request-ID when sane), echoed in the response."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers

_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def request_id_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        claimed = request.headers.get("X-Request-ID", "")
        request.request_id = claimed if _SANE_ID.match(claimed) else uuid.uuid4().hex  # type: ignore[attr-defined]
        response = get_response(request)
        response["X-Request-ID"] = request.request_id  # type: ignore[attr-defined]
        return response

    return middleware


def no_store_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """`Cache-Control: no-store` (Django's never-cache headers) on every API response and on
    every page served to a logged-in user: those are the ones that may show decrypted
    memories, and neither a browser nor a proxy may keep them."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if response.has_header("Cache-Control"):
            return response  # the view said (never_cache, or a deliberate policy)
        user = getattr(request, "user", None)
        if request.path.startswith("/api/") or (user is not None and user.is_authenticated):
            add_never_cache_headers(response)
        return response

    return middleware
