"""What every dashboard page of a namespace shares, whichever app serves it (governance,
evaluation): the namespace as the user may see it (404 outside, 403 below the role), the
acting user, the page context, where to go after a write."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from apps.audit.actors import Actor
from apps.namespaces.models import ROLE_RANK, MembershipRole, Namespace
from apps.namespaces.selectors import namespace_with_role, namespaces_for_user
from memoryhub.exceptions import NotFound

VIEWER, EDITOR, OWNER = MembershipRole.VIEWER, MembershipRole.EDITOR, MembershipRole.OWNER


class DashboardRequest(HttpRequest):
    user: User
    htmx: HtmxDetails


def namespace_for_request(request: DashboardRequest, slug: str, role: str = VIEWER) -> Namespace:
    """The namespace, if the user may see it (else 404), and acts in it with `role` or more
    (else 403). The role is kept on the request for the templates."""
    try:
        namespace, held = namespace_with_role(request.user, slug)
    except NotFound:
        raise Http404("Namespace not found.") from None
    if ROLE_RANK[MembershipRole(held)] < ROLE_RANK[MembershipRole(role)]:
        raise PermissionDenied(_("Your role in this namespace does not allow this."))
    request.role = held  # type: ignore[attr-defined]
    return namespace


def actor_of(request: DashboardRequest) -> Actor:
    return Actor.for_user(request.user, request)


def page_context(request: DashboardRequest, namespace: Namespace, **extra: Any) -> dict[str, Any]:
    role = getattr(request, "role", VIEWER)
    rank = ROLE_RANK[MembershipRole(role)]
    return {
        "namespace": namespace,
        "role": role,
        "role_label": MembershipRole(role).label,
        "can_edit": rank >= ROLE_RANK[EDITOR],
        "can_own": rank >= ROLE_RANK[OWNER],
        **extra,
    }


def back_to(request: DashboardRequest, fallback: str) -> HttpResponse:
    """After a write: htmx follows a client redirect; a plain form posts and is redirected."""
    target = request.POST.get("next") or fallback
    if not target.startswith("/") or target.startswith("//"):
        target = fallback
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)


def namespace_pick(request: DashboardRequest, target: str, heading: str) -> HttpResponse:
    """A top-bar link (Memories, Quality): the one namespace's page `target` (a URL name
    taking the slug), or a list of the user's namespaces to choose from."""
    namespaces = list(namespaces_for_user(request.user).order_by("slug"))
    if len(namespaces) == 1:
        return redirect(target, slug=namespaces[0].slug)
    context = {"namespaces": namespaces, "target": target, "heading": heading}
    return render(request, "namespace_pick.html", context)
