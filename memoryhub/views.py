"""Project-level views: the probes (liveness, readiness) and the error pages (JSON under
/api/, HTML elsewhere)."""

from __future__ import annotations

import sys
from functools import cache

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.views.decorators.cache import cache_control, never_cache
from django.views.decorators.http import require_GET

from memoryhub.api.errors import (
    DATABASE_RETRY_AFTER_SECONDS,
    is_api_path,
    json_bad_request,
    json_database_unavailable,
    json_not_found,
    json_server_error,
)
from memoryhub.health import current_readiness


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: 200 while the process runs and serves. It checks nothing else, so a
    database or broker outage never has the process restarted (readiness says so)."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 once the database, the broker (when one is configured) and the
    embedding models are ready, else 503; the body names each check's state either way."""
    readiness = current_readiness()
    return JsonResponse(readiness.as_dict(), status=200 if readiness.ready else 503)


@cache
def _favicon() -> bytes:
    return (settings.BASE_DIR / "static" / "favicon.svg").read_bytes()


@cache_control(public=True, max_age=86_400)
@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers ask for whatever the pages link: the pages' own icon
    (static/favicon.svg), served by the application so that no proxy rule is needed."""
    return HttpResponse(_favicon(), content_type="image/svg+xml")


def _is_api(request: HttpRequest) -> bool:
    return is_api_path(request.path)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_bad_request(request, exception)
    return render(request, "400.html", status=400)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_not_found(request, exception)
    return render(request, "404.html", status=404)


def _database_unavailable() -> bool:
    """Whether the error being handled is the database being out of reach (restarting, a
    failover, a dropped connection), not a bug: Django calls handler500 inside its except."""
    error = sys.exc_info()[1]
    return isinstance(error, OperationalError | InterfaceError)


def server_error(request: HttpRequest) -> HttpResponse:
    # The transaction of the request was rolled back whole: nothing was half-written.
    if _database_unavailable():
        if _is_api(request):
            return json_database_unavailable(request)
        response = HttpResponse(loader.get_template("503.html").render(), status=503)
        response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
        return response
    if _is_api(request):
        return json_server_error(request)
    # No context processors: the page must render even when the database is down.
    return HttpResponse(loader.get_template("500.html").render(), status=500)
