"""Every request gets an id (the client's X-Request-ID when sane), echoed in the response;
pages are dated in the viewer's time zone; signed-in pages are never cached."""

from __future__ import annotations

import re
import uuid
import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
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


TIME_ZONE_COOKIE = "tz"


def time_zone_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Dates on pages in the viewer's time zone: the IANA name the dashboard's script keeps
    in the `tz` cookie (the browser's own zone). Without it, or with a name that is not a
    zone, the server's zone (UTC); pages show the zone beside each time either way."""

    def middleware(request: HttpRequest) -> HttpResponse:
        name = request.COOKIES.get(TIME_ZONE_COOKIE, "")
        zone = None
        if name and len(name) <= 64:
            try:
                zone = zoneinfo.ZoneInfo(name)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                zone = None
        if zone is not None:
            timezone.activate(zone)
        else:
            timezone.deactivate()
        return get_response(request)

    return middleware
