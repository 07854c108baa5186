"""What every governance view shares: the namespace as the user may see it (404 outside,
403 below the role), the acting user, the page context, where to go after a write."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from apps.audit.actors import Actor
from apps.governance import selectors
from apps.governance.filters import PAGE_SIZES
from apps.memories.models import Memory
from apps.memories.selectors import memory_get
from apps.namespaces.models import ROLE_RANK, MembershipRole, Namespace
from apps.namespaces.selectors import namespace_with_role
from memoryhub.exceptions import NotFound

VIEWER, EDITOR, OWNER = MembershipRole.VIEWER, MembershipRole.EDITOR, MembershipRole.OWNER
ACTION_LABELS = {
    "archive": gettext_lazy("Archive"),
    "tag": gettext_lazy("Add a tag"),
    "delete": gettext_lazy("Delete"),
    "approve": gettext_lazy("Approve"),
    "restore": gettext_lazy("Restore"),
    "rollback": gettext_lazy("Roll back"),
    "merge": gettext_lazy("Merge"),
}


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


def memory_for(namespace: Namespace, memory_id: str) -> Memory:
    try:
        return memory_get(namespace=namespace, memory_id=memory_id)
    except NotFound:
        raise Http404("Memory not found.") from None


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


def page_size(raw: str | None) -> int:
    try:
        size = int(raw or 50)
    except ValueError:
        return 50
    return size if size in PAGE_SIZES else 50


def subject_for(namespace: Namespace, subject_id: str) -> Any:
    subject = selectors.subject_by_id(namespace=namespace, subject_id=subject_id)
    if subject is None:
        raise Http404("Subject not found.")
    return subject
