"""`/metrics`: Prometheus' text format, for a scraper holding MEMORYHUB_METRICS_TOKEN."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from apps.monitoring.collectors import scrape_collectors
from memoryhub import metrics

# The classic text format, which every Prometheus reads (generate_latest writes it).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """404 while MEMORYHUB_METRICS_TOKEN is unset (the endpoint does not exist); 401 without
    `Authorization: Bearer <token>` (compared in constant time)."""
    token = settings.MEMORYHUB_METRICS_TOKEN
    if not token:
        raise Http404
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.encode()
    ):
        response = HttpResponse("Unauthorized\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics.exposition(scrape_collectors()), content_type=CONTENT_TYPE)
