"""The overview (every namespace the user may see, or one), and the list of namespaces with
the form that creates one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from apps.audit.selectors import chain_status_latest
from apps.dashboard.overview.forms import (
    NamespaceCreateForm,
)
from apps.dashboard.pages import (
    DashboardRequest,
    actor_of,
    namespace_for_request,
    page_context,
)
from apps.governance.rollups import overview_snapshot
from apps.governance.selectors import review_counts
from apps.memories import vector_spaces
from apps.namespaces.models import Membership, MembershipRole
from apps.namespaces.selectors import namespaces_for_user
from apps.namespaces.services import (
    namespace_create,
)
from apps.pipeline.selectors import extractor_in_use, llm_counters
from memoryhub.exceptions import ApplicationError
from memoryhub.health import current_health

# --- Overview ------------------------------------------------------------------------------


@login_required
def overview(request: DashboardRequest, slug: str | None = None) -> HttpResponse:
    """The landing page (every namespace the user may see) and a namespace's own overview:
    per-day charts of the last 30 days, what waits for review, what retention does soon,
    the audit chain's last verification, the extractor in use (with the LLM endpoint's
    counters when it uses one). System status is for operators (staff) only."""
    if slug is not None:
        namespaces = [namespace_for_request(request, slug)]
        context = page_context(request, namespaces[0])
    else:
        namespaces = list(namespaces_for_user(request.user))
        context = {"namespace": None}
    template = "dashboard/overview/overview.html"
    if request.htmx:  # the system status card polls itself
        return render(request, template + "#status", _status(request))
    context.update(namespaces=namespaces, **_status(request))
    if namespaces:
        # A namespace's own extractor, or the server's default on the page of every namespace.
        extractor = extractor_in_use(namespace=context["namespace"])
        context.update(extractor=extractor, llm=llm_counters() if extractor.uses_llm else None)
        snapshot = overview_snapshot(namespaces=namespaces)
        review = review_counts(namespaces=namespaces)  # live: the queue's page counts so too
        context.update(
            figures=snapshot.content,
            computed_at=snapshot.computed_at,
            review=review,
            review_total=sum(review.values()),
            chain=chain_status_latest(),
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


@login_required
@require_http_methods(["GET", "POST"])
def namespace_list(request: DashboardRequest) -> HttpResponse:
    """The user's namespaces with their role and size; superusers also create one here."""
    form = NamespaceCreateForm(request.POST or None)
    if request.method == "POST":
        if not request.user.is_superuser:
            raise PermissionDenied(_("Only an administrator creates namespaces."))
        if form.is_valid():
            try:
                created = namespace_create(
                    actor=actor_of(request),
                    slug=form.cleaned_data["slug"],
                    name=form.cleaned_data["name"],
                    owner=request.user,
                )
            except ApplicationError as error:
                form.add_error("slug", error.localized)
            else:
                messages.success(request, _("Namespace created."))
                return redirect("dashboard:policies:settings", slug=created.slug)
    rows = namespaces_for_user(request.user).annotate(
        member_count=Count("memberships", distinct=True)
    )
    roles = dict(Membership.objects.filter(user=request.user).values_list("namespace_id", "role"))
    return render(
        request,
        "dashboard/overview/namespaces.html",
        {
            "rows": [
                (n, MembershipRole(roles.get(n.pk, MembershipRole.OWNER)).label) for n in rows
            ],
            "form": form,
        },
    )
