"""Project-level views: health and the error pages (JSON under /api/, HTML elsewhere)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from memoryhub.api.errors import json_bad_request, json_not_found, json_server_error
from memoryhub.health import current_health


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    health = current_health()
    return JsonResponse(health.as_dict(), status=200 if health.ok else 503)


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_bad_request(request, exception)
    return render(request, "400.html", status=400)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_not_found(request, exception)
    return render(request, "404.html", status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return json_server_error(request)
    # No context processors: the page must render even when the database is down.
    return HttpResponse(loader.get_template("500.html").render(), status=500)
