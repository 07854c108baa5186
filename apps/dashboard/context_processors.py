"""What every dashboard page shows above its content: the LLM extractor's outage, and to a
namespace's owners its webhook endpoints that stopped taking events."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from django.http import HttpRequest
from django.utils import dateformat, timezone

from apps.pipeline.selectors import extractor_outage
from apps.webhooks.selectors import endpoints_failing


def llm_outage(request: HttpRequest) -> dict[str, Callable[[], dict[str, Any] | None]]:
    """`llm_outage`: on a dashboard page, when the LLM extractor of the page's namespace
    (or the server's default, on a page of no namespace) cannot be reached, when it stopped
    answering, in the viewer's time zone. A callable: only a page that shows it (the base
    layout, not an htmx fragment) looks it up: the breaker's state in the cache when that
    extractor uses the LLM, and no query (the namespace is the one the view fetched,
    `pages.namespace_for_request`)."""
    match = request.resolver_match
    if match is None or not match.namespace.startswith("dashboard"):
        return {}

    @cache
    def outage() -> dict[str, Any] | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        found = extractor_outage(namespace=getattr(request, "namespace", None))
        if found is None:
            return None
        since = timezone.localtime(found.since)
        today = since.date() == timezone.localdate()
        return {"since": since, "at": dateformat.format(since, "H:i T" if today else "Y-m-d H:i T")}

    return {"llm_outage": outage}


def webhooks_failing(request: HttpRequest) -> dict[str, Callable[[], int]]:
    """`webhooks_failing`: on a namespace's page, for its owners, how many of its webhook
    endpoints used up a delivery's retries (a callable; no query unless the namespace has
    endpoints at all)."""
    match = request.resolver_match
    if match is None or not match.namespace.startswith("dashboard"):
        return {}

    @cache
    def failing() -> int:
        namespace = getattr(request, "namespace", None)
        if namespace is None or getattr(request, "role", "") != "owner":
            return 0
        if not namespace.webhook_endpoints:
            return 0
        return endpoints_failing(namespace=namespace).count()

    return {"webhooks_failing": failing}
