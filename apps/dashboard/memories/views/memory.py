"""A memory's detail, its edit, its actions (archive, approve, restore, roll back, end), its
deletion and the feedback on it."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from apps.dashboard.memories.forms import (
    MemoryEditForm,
)
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
    memory_approve,
    memory_archive,
    memory_delete,
    memory_end,
    memory_restore,
    memory_supersede_rollback,
    memory_update,
)
from apps.recall.services import recall_feedback_give
from memoryhub.exceptions import ApplicationError


@login_required
def memory_detail(request: DashboardRequest, slug: str, memory_id: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug)
    memory = memory_for(namespace, memory_id)
    story = selectors.memory_story(namespace=namespace, memory=memory)
    content_read_record(
        actor=actor_of(request),
        namespace=namespace,
        what="memory",
        memory_ids=[memory.pk],
        subject_id=memory.subject_id,
    )
    return render(
        request,
        "dashboard/memories/memory.html",
        page_context(
            request,
            namespace,
            story=story,
            memory=memory,
            metadata=json.dumps(memory.metadata, indent=2, ensure_ascii=False, sort_keys=True),
            source=json.dumps(memory.source, indent=2, ensure_ascii=False, sort_keys=True),
        ),
    )


@login_required
@require_http_methods(["GET", "POST"])
def memory_edit(request: DashboardRequest, slug: str, memory_id: str) -> HttpResponse:
    """A new version with a required reason; kind, tags and importance too."""
    namespace = namespace_for_request(request, slug, EDITOR)
    memory = memory_for(namespace, memory_id)
    story = selectors.memory_story(namespace=namespace, memory=memory, recall_limit=0)
    form = MemoryEditForm(
        request.POST or None,
        initial={
            "content": story.content,
            "kind": memory.kind,
            "tags": ", ".join(memory.tags),
            "importance": memory.importance,
        },
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            memory_update(
                actor=actor_of(request),
                memory=memory,
                content=data["content"],
                reason=data["reason"],
                kind=data["kind"],
                tags=data["tags"],
                importance=data["importance"],
            )
        except ApplicationError as error:
            form.add_error(None, error.localized)
        else:
            messages.success(request, _("Saved."))
            if request.GET.get("from") == "review":  # a correction made from the queue
                return redirect("dashboard:review:queue", slug=slug)
            return redirect("dashboard:memories:detail", slug=slug, memory_id=memory.pk)
    if request.method == "GET":
        content_read_record(
            actor=actor_of(request),
            namespace=namespace,
            what="memory_edit",
            memory_ids=[memory.pk],
            subject_id=memory.subject_id,
        )
    return render(
        request,
        "dashboard/memories/memory_edit.html",
        page_context(request, namespace, memory=memory, form=form),
    )


MEMORY_ACTIONS = {
    "approve": memory_approve,
    "archive": memory_archive,
    "restore": memory_restore,
    "rollback": memory_supersede_rollback,
    "confirm": memory_approve,  # a disputed fact, still true
    "end": memory_end,  # a fact that no longer holds
}


@login_required
@require_POST
def memory_action(request: DashboardRequest, slug: str, memory_id: str) -> HttpResponse:
    """Approve, archive (with an undo), restore, roll back a supersede, or settle a disputed
    fact: confirm it or end it (correcting it is the edit page's)."""
    namespace = namespace_for_request(request, slug, EDITOR)
    memory = memory_for(namespace, memory_id)
    name = request.POST.get("action", "")
    action = MEMORY_ACTIONS.get(name)
    detail = reverse("dashboard:memories:detail", kwargs={"slug": slug, "memory_id": memory.pk})
    if action is None:
        messages.error(request, _("Unknown action."))
        return back_to(request, detail)
    try:
        action(actor=actor_of(request), memory=memory)
    except ApplicationError as error:
        messages.error(request, error.localized)
        return back_to(request, detail)
    if request.htmx and request.POST.get("from") == "review":
        return render(
            request,
            "dashboard/review/review.html#done",
            page_context(
                request, namespace, done_action=name, done_label=ACTION_LABELS[name], memory=memory
            ),
        )
    messages.success(request, _("Done: %(action)s.") % {"action": ACTION_LABELS[name]})
    return back_to(request, detail)


@login_required
@require_http_methods(["GET", "POST"])
def memory_remove(request: DashboardRequest, slug: str, memory_id: str) -> HttpResponse:
    """Delete one memory, after a confirmation that names it."""
    namespace = namespace_for_request(request, slug, EDITOR)
    memory = memory_for(namespace, memory_id)
    if request.method == "POST":
        memory_delete(actor=actor_of(request), memory=memory)
        messages.success(request, _("Memory %(id)s deleted.") % {"id": memory.pk})
        return redirect("dashboard:memories:list", slug=slug)
    story = selectors.memory_story(namespace=namespace, memory=memory, recall_limit=0)
    content_read_record(
        actor=actor_of(request),
        namespace=namespace,
        what="memory_delete",
        memory_ids=[memory.pk],
        subject_id=memory.subject_id,
    )
    return render(
        request,
        "dashboard/memories/memory_delete.html",
        page_context(request, namespace, memory=memory, content=story.content),
    )


@login_required
@require_POST
def memory_feedback(request: DashboardRequest, slug: str, memory_id: str) -> HttpResponse:
    """One click on a row of the memory's recall log: was it relevant to that recall?
    The same feedback an app gives through the API, by this admin."""
    namespace = namespace_for_request(request, slug, EDITOR)
    memory = memory_for(namespace, memory_id)
    detail = reverse("dashboard:memories:detail", kwargs={"slug": slug, "memory_id": memory.pk})
    relevant = request.POST.get("relevant") == "1"
    try:
        recall_feedback_give(
            actor=actor_of(request),
            namespace=namespace,
            recall_id=request.POST.get("recall", ""),
            memory_id=str(memory.pk),
            relevant=relevant,
        )
    except ApplicationError as error:
        messages.error(request, error.localized)
        return back_to(request, detail)
    messages.success(
        request,
        _("Marked relevant to that recall.")
        if relevant
        else _("Marked not relevant to that recall."),
    )
    return back_to(request, detail + "#recall-log")
