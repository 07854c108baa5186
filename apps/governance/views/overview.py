"""The overview: charts of the last 30 days, for every namespace the user may see or one."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render

from apps.audit.selectors import chain_status_latest
from apps.governance.rollups import overview_snapshot
from apps.governance.selectors import review_counts
from apps.governance.views.access import (
    DashboardRequest,
    namespace_for_request,
    page_context,
)
from apps.memories import vector_spaces
from apps.namespaces.selectors import namespaces_for_user
from apps.pipeline.selectors import extractor_in_use
from memoryhub.health import current_health

# --- Overview ------------------------------------------------------------------------------


@login_required
def overview(request: DashboardRequest, slug: str | None = None) -> HttpResponse:
    """The landing page (every namespace the user may see) and a namespace's own overview:
    per-day charts of the last 30 days, what waits for review, what retention does soon,
    the audit chain's last verification. System status is for operators (staff) only."""
    if slug is not None:
        namespaces = [namespace_for_request(request, slug)]
        context = page_context(request, namespaces[0])
    else:
        namespaces = list(namespaces_for_user(request.user))
        context = {"namespace": None}
    template = "governance/overview.html"
    if request.htmx:  # the system status card polls itself
        return render(request, template + "#status", _status(request))
    context.update(namespaces=namespaces, **_status(request))
    if namespaces:
        snapshot = overview_snapshot(namespaces=namespaces)
        review = review_counts(namespaces=namespaces)  # live: the queue's page counts so too
        context.update(
            figures=snapshot.content,
            computed_at=snapshot.computed_at,
            review=review,
            review_total=sum(review.values()),
            chain=chain_status_latest(),
            extractor=extractor_in_use(),
        )
    return render(request, template, context)


def _status(request: DashboardRequest) -> dict[str, object]:
    """System status, for staff only: health, and how far each vector column is filled."""
    if not request.user.is_staff:
        return {"health": None}
    return {
        "health": current_health(),
        "vectors": vector_spaces.fills(),
        "vector_mode": vector_spaces.serving().mode,
    }
