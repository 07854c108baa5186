"""A namespace's settings: retention, caps, summaries, PII and review policies, portal origins,
each change previewed (what it would do to stored memories) before it is saved. Owners only."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from apps.dashboard.pages import (
    OWNER,
    DashboardRequest,
    actor_of,
    namespace_for_request,
    page_context,
)
from apps.dashboard.policies.forms import (
    SETTINGS_FIELDS,
    NamespaceSettingsForm,
)
from apps.governance.previews import policy_preview
from apps.namespaces.services import (
    namespace_update,
)


@login_required
@require_http_methods(["GET", "POST"])
def namespace_settings(request: DashboardRequest, slug: str) -> HttpResponse:
    """The namespace's policies: a first POST shows what the change would do (a dry run);
    the second, confirmed, saves it (audited: which fields changed)."""
    namespace = namespace_for_request(request, slug, OWNER)
    form = NamespaceSettingsForm(request.POST or None, instance=_copy(namespace))
    context: dict[str, Any] = page_context(request, namespace, form=form)
    if request.method == "POST" and form.is_valid():
        changes = form.changes(namespace)
        if not changes:
            messages.info(request, _("Nothing changed."))
            return redirect("dashboard:policies:settings", slug=slug)
        if request.POST.get("confirm") == "1":
            namespace_update(actor=actor_of(request), namespace=namespace, **changes)
            messages.success(request, _("Settings saved."))
            return redirect("dashboard:policies:settings", slug=slug)
        context["effects"] = policy_preview(namespace=namespace, changes=changes)
        context["posted"] = [
            (name, value) for name in SETTINGS_FIELDS for value in request.POST.getlist(name)
        ]
        context["changed"] = [form[name] for name in SETTINGS_FIELDS if name in changes]
    return render(request, "dashboard/policies/namespace_settings.html", context)


def _copy(namespace: Any) -> Any:
    """The form edits a copy: the namespace itself keeps its saved values to compare with."""
    return type(namespace).objects.get(pk=namespace.pk)
