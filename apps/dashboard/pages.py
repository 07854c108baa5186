"""What every dashboard page of a namespace shares, whichever app serves it (governance,
evaluation): the namespace as the user may see it (404 outside, 403 below the role), the
acting user, the page context, a form's POST, where to go after a write."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from apps.audit.actors import Actor
from apps.governance import selectors
from apps.memories.models import Memory
from apps.memories.selectors import memory_get
from apps.namespaces.models import ROLE_RANK, MembershipRole, Namespace
from apps.namespaces.selectors import namespace_with_role, namespaces_for_user
from memoryhub.exceptions import ApplicationError, NotFound

Result = TypeVar("Result")

VIEWER, EDITOR, OWNER = MembershipRole.VIEWER, MembershipRole.EDITOR, MembershipRole.OWNER


class DashboardRequest(HttpRequest):
    user: User
    htmx: HtmxDetails


def namespace_for_request(request: DashboardRequest, slug: str, role: str = VIEWER) -> Namespace:
    """The namespace, if the user may see it (else 404), and acts in it with `role` or more
    (else 403). The role and the namespace are kept on the request for the templates (the
    role) and the banner every page shows (`context_processors.llm_outage`)."""
    try:
        namespace, held = namespace_with_role(request.user, slug)
    except NotFound:
        raise Http404("Namespace not found.") from None
    if ROLE_RANK[MembershipRole(held)] < ROLE_RANK[MembershipRole(role)]:
        raise PermissionDenied(_("Your role in this namespace does not allow this."))
    request.role = held  # type: ignore[attr-defined]
    request.namespace = namespace  # type: ignore[attr-defined]
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


def form_errors(form: forms.BaseForm) -> str:
    """A form's errors in one line, each named by its field's label (in the reader's
    language), errors of the whole form unnamed."""
    parts = []
    for name, errors in form.errors.items():
        text = " ".join(map(str, errors))
        parts.append(f"{form[name].label}: {text}" if name in form.fields else text)
    return "; ".join(parts)


def form_post(
    request: HttpRequest,
    form: forms.BaseForm,
    action: Callable[[dict[str, Any]], Result],
    *,
    success_url: Callable[[Result], str],
    success_message: str | Callable[[Result], str] = "",
) -> HttpResponse | None:
    """A bound form posted to the page that shows it. Valid, `action` runs on its cleaned
    data (a service call), and the browser is redirected to `success_url` of what it
    returned, told `success_message` if there is one. None when the form is invalid or the
    service refuses (the refusal becomes an error message): the view renders its page again,
    the form with what was typed and its errors beside its fields."""
    if not form.is_valid():
        return None
    try:
        result = action(form.cleaned_data)
    except ApplicationError as error:
        messages.error(request, error.localized)
        return None
    message = success_message(result) if callable(success_message) else success_message
    if message:
        messages.success(request, message)
    return redirect(success_url(result))


def form_post_elsewhere(
    request: HttpRequest,
    form: forms.BaseForm,
    action: Callable[[dict[str, Any]], Result],
    *,
    back_url: str,
    success_url: Callable[[Result], str] | None = None,
    success_message: str | Callable[[Result], str] = "",
    invalid_message: str = "%(errors)s",
) -> HttpResponse:
    """A bound form shown on another page (`back_url`) and posted to a view of its own, as
    `form_post` but for a refusal: this view has no page to render, so an invalid form (its
    errors on one line, as `%(errors)s` in `invalid_message`) or the service's refusal is an
    error message and a redirect back. Without `success_url`, success goes back too."""
    if not form.is_valid():
        messages.error(request, invalid_message % {"errors": form_errors(form)})
        return redirect(back_url)
    response = form_post(
        request,
        form,
        action,
        success_url=success_url or (lambda result: back_url),
        success_message=success_message,
    )
    return redirect(back_url) if response is None else response


def namespace_pick(request: DashboardRequest, target: str, heading: str) -> HttpResponse:
    """A top-bar link (Memories, Quality): the one namespace's page `target` (a URL name
    taking the slug), or a list of the user's namespaces to choose from."""
    namespaces = list(namespaces_for_user(request.user).order_by("slug"))
    if len(namespaces) == 1:
        return redirect(target, slug=namespaces[0].slug)
    context = {"namespaces": namespaces, "target": target, "heading": heading}
    return render(request, "namespace_pick.html", context)


# --- A namespace's memory and subject pages -------------------------------------------------

PAGE_SIZES = (25, 50, 100)
ACTION_LABELS = {
    "archive": gettext_lazy("Archive"),
    "tag": gettext_lazy("Add a tag"),
    "delete": gettext_lazy("Delete"),
    "approve": gettext_lazy("Approve"),
    "restore": gettext_lazy("Restore"),
    "rollback": gettext_lazy("Roll back"),
    "merge": gettext_lazy("Merge"),
    "confirm": gettext_lazy("Confirm"),
    "end": gettext_lazy("End"),
}


def memory_for(namespace: Namespace, memory_id: str) -> Memory:
    try:
        return memory_get(namespace=namespace, memory_id=memory_id)
    except NotFound:
        raise Http404("Memory not found.") from None


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
