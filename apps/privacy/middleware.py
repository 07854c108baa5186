"""Cookies of a portal page shown in another site's frame (a namespace's embedding origins):
the browser sends a frame's cookies back only if they are `SameSite=None; Secure`. The
portal's own cookie is set so at entry; this does the same for the CSRF token and the
one-time messages, which Django sets after the view (so this sits outside their middleware)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

FRAMED = "portal_framed"


def framed_cookies_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if getattr(response, FRAMED, False):
            for name in (settings.CSRF_COOKIE_NAME, "messages"):
                if name in response.cookies:
                    response.cookies[name]["samesite"] = "None"
                    response.cookies[name]["secure"] = True
        return response

    return middleware
