"""The review queue: memories waiting for a person (uncertain, disputed, reported), approved
or merged one by one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.dashboard.pages import (
    ACTION_LABELS,
    EDITOR,
    DashboardRequest,
    actor_of,
    back_to,
    memory_for,
    namespace_for_request,
    page_context,
)
from apps.governance import selectors
from apps.governance.services import content_read_record
from apps.memories.services import (
    memory_merge,
)
from memoryhub.exceptions import ApplicationError


@login_required
def review(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug)
    queue = selectors.review_queue(namespace=namespace)
    counts = selectors.review_counts(namespaces=[namespace], pairs=len(queue["duplicate"]))
    items = [item for section in queue.values() for item in section]
    shown = {item.row.memory.pk for item in items}
    shown |= {item.other.memory.pk for item in items if item.other}
    shown |= {step.memory.pk for item in items if item.history for step in item.history.steps}
    content_read_record(
        actor=actor_of(request), namespace=namespace, what="review", memory_ids=shown
    )
    return render(
        request,
        "dashboard/review/review.html",
        page_context(
            request,
            namespace,
            sections=[(reason, queue[reason], counts[reason]) for reason in queue],
            total=sum(counts.values()),
        ),
    )


@login_required
@require_POST
def review_merge(request: DashboardRequest, slug: str) -> HttpResponse:
    """Merge a duplicate pair: `keep` stays; `other` is superseded by it, linked."""
    namespace = namespace_for_request(request, slug, EDITOR)
    keep = memory_for(namespace, request.POST.get("keep", ""))
    other = memory_for(namespace, request.POST.get("other", ""))
    queue_url = reverse("dashboard:review:queue", kwargs={"slug": slug})
    try:
        memory_merge(actor=actor_of(request), keep=keep, other=other)
    except ApplicationError as error:
        messages.error(request, error.localized)
        return back_to(request, queue_url)
    if request.htmx:
        return render(
            request,
            "dashboard/review/review.html#done",
            page_context(
                request,
                namespace,
                done_action="merge",
                done_label=ACTION_LABELS["merge"],
                memory=keep,
            ),
        )
    messages.success(request, _("Merged."))
    return back_to(request, queue_url)
