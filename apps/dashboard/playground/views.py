"""The playground: assemble a prompt as an app would, and see what went in and why.

The form is sent by POST (the query and system prompt stay out of addresses and server
logs); "Save and share" stores the set-up, encrypted, and gives a link that opens it and
assembles it again. Without JavaScript the form posts and the page reloads; with htmx only
the result is swapped in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST
from django_htmx.middleware import HtmxDetails

from apps.audit.actors import Actor
from apps.context.services import (
    STRATEGIES,
    ContextRequest,
    context_assemble,
    playground_config_get,
    playground_config_save,
)
from apps.dashboard.pages import EDITOR, VIEWER, DashboardRequest, namespace_for_request
from apps.dashboard.playground.forms import PlaygroundForm
from apps.namespaces.models import ROLE_RANK, MembershipRole
from apps.namespaces.selectors import namespace_for_user, namespaces_for_user, user_role
from apps.recall.services import recall_feedback_give
from memoryhub.exceptions import ApplicationError
from memoryhub.row_security import namespace_wall

SECTION_LABELS = {
    "system": _("System prompt"),
    "procedural": _("Instructions"),
    "shared": _("Shared memories"),
    "memories": _("Recalled memories"),
    "summary": _("Summary"),
    "turns": _("Recent turns"),
    "query": _("Query"),
}


class PlaygroundRequest(HttpRequest):
    """A request as the playground sees it: signed in (`login_required`), and with the
    `htmx` details that django-htmx's middleware adds."""

    user: User
    htmx: HtmxDetails


@login_required
def playground(request: PlaygroundRequest) -> HttpResponse:
    slugs = list(namespaces_for_user(request.user).values_list("slug", flat=True))
    context: dict[str, Any] = {"results": [], "error": None}
    if request.method == "POST":
        form = PlaygroundForm(request.POST, namespaces=slugs)
    elif "saved" in request.GET:
        # A shared link fills the form; running it is the reader's POST (a GET changes nothing:
        # an assembly writes to the recall log).
        try:
            config = playground_config_get(user=request.user, config_id=request.GET["saved"])
            form = PlaygroundForm(initial=config, namespaces=slugs)
        except ApplicationError as error:
            form = PlaygroundForm(namespaces=slugs)
            context["error"] = error.localized
    else:
        form = PlaygroundForm(namespaces=slugs)
    context["form"] = form
    if form.is_bound:
        if form.is_valid():
            _assemble(request, form.cleaned_data, context)
        else:
            # An ErrorList yields its messages, as str (its stubs: ValidationError | str | promise).
            errors_by_field = cast(Mapping[str, Iterable[str]], form.errors)
            context["error"] = "; ".join(
                f"{form.fields[name].label or name}: {' '.join(errors)}"
                if name in form.fields
                else " ".join(errors)
                for name, errors in errors_by_field.items()
            )
    template = "dashboard/playground/playground.html"
    if request.htmx and request.method == "POST":
        template += "#result"
    return render(request, template, context)


def _assemble(request: PlaygroundRequest, data: dict[str, Any], context: dict[str, Any]) -> None:
    actor = Actor.for_user(request.user, request)
    try:
        namespace = namespace_for_user(request.user, data["namespace"])
        # Feedback is an editor's; a viewer sees the assembly without the buttons.
        role = user_role(request.user, namespace) or VIEWER
        context["can_give_feedback"] = ROLE_RANK[MembershipRole(role)] >= ROLE_RANK[EDITOR]
        for strategy in STRATEGIES if data["compare"] else (data["strategy"],):
            with namespace_wall(namespace.pk):
                result = context_assemble(
                    actor=actor,
                    namespace=namespace,
                    spec=ContextRequest.from_data(data=data, strategy=strategy),
                    purpose="playground",
                    include_text=True,
                )
            context["results"].append(_for_display(result))
        if data["as_of"] is not None and not data["compare"]:
            with namespace_wall(namespace.pk):
                now = context_assemble(
                    actor=actor,
                    namespace=namespace,
                    spec=ContextRequest.from_data(data=data, as_of=None),
                    purpose="playground",
                    include_text=True,
                )
            context["since"] = _difference(context["results"][0], now)
        if "save" in request.POST:
            config = {
                key: value.isoformat() if isinstance(value, datetime) else value
                for key, value in data.items()
                if value not in (None, "")
            }
            with namespace_wall(namespace.pk):
                saved = playground_config_save(
                    actor=actor, user=request.user, namespace=namespace, config=config
                )
            context["share_url"] = request.build_absolute_uri(
                f"{reverse('dashboard:playground:index')}?saved={saved.id}"
            )
    except ApplicationError as error:
        context["error"] = error.localized


def _difference(then: dict[str, Any], now: dict[str, Any]) -> dict[str, list[str]]:
    """What the memories sections of a prompt assembled as of a moment (`then`) and of the
    same prompt now differ by: the lines told then and no longer, and those told now only."""

    def lines(result: dict[str, Any]) -> dict[str, str]:
        return {
            item["id"]: item["text"]
            for section in result["sections"]
            if section["name"] in ("memories", "shared")
            for item in section["items"]
        }

    before, after = lines(then), lines(now)
    return {
        "gone": [text for key, text in before.items() if key not in after],
        "new": [text for key, text in after.items() if key not in before],
    }


def _for_display(result: dict[str, Any]) -> dict[str, Any]:
    """Adds what the page draws: each section's share of the budget and where it starts on
    the bar, in percent."""
    budget = max(result["budget_tokens"], 1)
    offset = 0.0
    for section in result["sections"]:
        section["percent"] = round(100 * section["tokens"] / budget, 2)
        section["offset"] = offset
        offset = round(offset + section["percent"], 2)
        section["label"] = SECTION_LABELS[section["name"]]
    result["used_percent"] = round(100 * result["total_tokens"] / budget, 1)
    return result


@login_required
@require_POST
def playground_feedback(request: PlaygroundRequest) -> HttpResponse:
    """One click on a memory the playground's assembly served: relevant to that recall or
    not (editors; the same feedback an app gives through the API). htmx swaps the buttons
    for the answer; without it, the page says so on a plain response."""
    namespace = namespace_for_request(
        cast(DashboardRequest, request), request.POST.get("namespace", ""), EDITOR
    )
    relevant = request.POST.get("relevant") == "1"
    try:
        recall_feedback_give(
            actor=Actor.for_user(request.user, request),
            namespace=namespace,
            recall_id=request.POST.get("recall", ""),
            memory_id=request.POST.get("memory", ""),
            relevant=relevant,
        )
    except ApplicationError as error:
        return render(
            request,
            "dashboard/playground/_feedback.html",
            {"error": error.localized},
            status=error.status_code,
        )
    return render(request, "dashboard/playground/_feedback.html", {"relevant": relevant})
