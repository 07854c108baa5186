"""The playground: assemble a prompt as an app would, and see what went in and why."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.audit.actors import Actor
from apps.context.forms import PlaygroundForm
from apps.context.services import STRATEGIES, ContextRequest, context_assemble
from apps.namespaces.selectors import namespace_for_user, namespaces_for_user
from memoryhub.exceptions import ApplicationError

SECTION_LABELS = {
    "system": "System prompt",
    "procedural": "Instructions",
    "shared": "Shared memories",
    "memories": "Recalled memories",
    "summary": "Summary",
    "turns": "Recent turns",
    "query": "Query",
}


@login_required
def playground(request: HttpRequest) -> HttpResponse:
    slugs = list(namespaces_for_user(request.user).values_list("slug", flat=True))
    submitted = "query" in request.GET
    form = PlaygroundForm(request.GET if submitted else None, namespaces=slugs)
    context: dict = {"form": form, "labels": SECTION_LABELS, "results": [], "error": None}
    if submitted and form.is_valid():
        data = form.cleaned_data
        namespace = namespace_for_user(request.user, data["namespace"])
        strategies = STRATEGIES if data["compare"] else (data["strategy"],)
        try:
            for strategy in strategies:
                result = context_assemble(
                    actor=Actor.for_user(request.user, request),
                    namespace=namespace,
                    request=ContextRequest(
                        query=data["query"],
                        subject=data["subject"] or None,
                        session=data["session"] or None,
                        model=data["model"],
                        max_context_tokens=data["max_context_tokens"],
                        reserve_tokens=data["reserve_tokens"],
                        strategy=strategy,
                        system_prompt=data["system_prompt"],
                        recall_k=data["k"],
                        window=data["window"],
                        buffer_tokens=data["buffer_tokens"],
                        placement=data["placement"],
                    ),
                    purpose="playground",
                    include_text=True,
                )
                context["results"].append(_for_display(result))
        except ApplicationError as error:
            context["error"] = error.message
    template = "context/playground.html"
    if request.htmx:
        template += "#result"
    return render(request, template, context)


def _for_display(result: dict) -> dict:
    """Adds what the page draws: each section's share of the budget, in percent."""
    budget = max(result["budget_tokens"], 1)
    for section in result["sections"]:
        section["percent"] = round(100 * section["tokens"] / budget, 2)
        section["label"] = SECTION_LABELS[section["name"]]
    result["free_tokens"] = result["budget_tokens"] - result["total_tokens"]
    result["used_percent"] = round(100 * result["total_tokens"] / budget, 1)
    return result
