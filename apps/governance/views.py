"""The governance pages of a namespace: explorer, memory detail and its actions, review
queue, bulk changes, purge, subjects.

Who sees what: a namespace the user is not a member of is a 404 on every URL here (as in the
API); a member whose role is too low for a write gets 403. `viewer` reads; `editor` edits,
approves, archives, restores, merges, rolls back and deletes single memories, and pauses
subjects; `owner` also purges, bulk-deletes and erases. Superusers are owners everywhere.
Every page that shows decrypted content records that read in the audit log (ids, never
text). One view and one template serve a page and its htmx fragment.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from apps.audit.actors import Actor
from apps.governance import selectors
from apps.governance.filters import PAGE_SIZES, MemoryFilter
from apps.governance.forms import (
    BulkForm,
    EraseForm,
    MemoryEditForm,
    PurgeForm,
    SearchForm,
)
from apps.governance.services import content_read_record, purge_start
from apps.memories.models import Memory
from apps.memories.selectors import memory_get
from apps.memories.services import (
    memories_bulk_change,
    memory_approve,
    memory_archive,
    memory_delete,
    memory_merge,
    memory_restore,
    memory_supersede_rollback,
    memory_update,
    subject_erase,
    subject_export,
    subject_set_paused,
)
from apps.namespaces.models import ROLE_RANK, MembershipRole, Namespace
from apps.namespaces.selectors import namespace_with_role, namespaces_for_user
from apps.recall.search import recall_memories
from apps.recall.statements import RecallFilters
from memoryhub.exceptions import ApplicationError, NotFound

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
COMPONENTS = ("vector", "context", "keyword", "boosts", "recency", "importance")
BAR_WIDTH = 48
SEARCH_HITS = 20
# Filters the recall engine does not apply itself: they narrow its hits afterwards.
POST_FILTERS = ("status", "source", "since", "until", "confidence_below")


class DashboardRequest(HttpRequest):
    user: User
    htmx: HtmxDetails


def _namespace(request: DashboardRequest, slug: str, role: str = VIEWER) -> Namespace:
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


def _memory(namespace: Namespace, memory_id: str) -> Memory:
    try:
        return memory_get(namespace=namespace, memory_id=memory_id)
    except NotFound:
        raise Http404("Memory not found.") from None


def _actor(request: DashboardRequest) -> Actor:
    return Actor.for_user(request.user, request)


def _context(request: DashboardRequest, namespace: Namespace, **extra: Any) -> dict[str, Any]:
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


def _back(request: DashboardRequest, fallback: str) -> HttpResponse:
    """After a write: htmx follows a client redirect; a plain form posts and is redirected."""
    target = request.POST.get("next") or fallback
    if not target.startswith("/") or target.startswith("//"):
        target = fallback
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)


@login_required
def namespace_pick(request: DashboardRequest) -> HttpResponse:
    """The Memories link: the explorer of the one namespace, or a list to choose from."""
    namespaces = list(namespaces_for_user(request.user).order_by("slug"))
    if len(namespaces) == 1:
        return redirect("governance:explorer", slug=namespaces[0].slug)
    return render(request, "governance/pick.html", {"namespaces": namespaces})


# --- Explorer ------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def explorer(request: DashboardRequest, slug: str) -> HttpResponse:
    """Newest first, filtered by the query string; with a query (POSTed: its text stays out
    of addresses and logs), the recall engine's hits with their score components."""
    namespace = _namespace(request, slug)
    filters = request.GET.copy()
    if request.method == "POST":
        # htmx sends the filter form as it stands (hx-include), which may be newer than the
        # page's address; without JavaScript the form's address carries them.
        for name in MemoryFilter.base_filters:
            if name in request.POST:
                filters[name] = request.POST[name]
    filterset = MemoryFilter(filters or None, queryset=selectors.namespace_memories(namespace))
    size = _page_size(request.GET.get("size"))
    context = _context(
        request,
        namespace,
        filterset=filterset,
        size=size,
        sizes=PAGE_SIZES,
        search=SearchForm(request.POST or None),
        query_string=_without(request.GET, "after", "before"),
        filter_string=_without(request.GET, "after", "before", "size"),
        filtered=bool(filterset.is_bound and filterset.is_valid() and filterset.active_filters()),
    )
    shown: list[Any] = []
    if request.method == "POST" and context["search"].is_valid():
        context["search_active_only"] = filters.get("status") not in (None, "", "active")
        context["hits"], context["search_ms"] = _search(
            request, namespace, filterset, context["search"].cleaned_data["q"]
        )
        shown = [hit["row"].memory.pk for hit in context["hits"]]
    elif not filterset.is_bound or filterset.is_valid():
        page = selectors.explorer_page(
            memories=filterset.qs,
            size=size,
            after=request.GET.get("after", ""),
            before=request.GET.get("before", ""),
        )
        context["page"] = page
        shown = [row.memory.pk for row in page.rows]
    content_read_record(actor=_actor(request), namespace=namespace, what="list", memory_ids=shown)
    template = "governance/explorer.html"
    if request.htmx and not request.htmx.boosted:
        template += "#results"
    return render(request, template, context)


def _page_size(raw: str | None) -> int:
    try:
        size = int(raw or 50)
    except ValueError:
        return 50
    return size if size in PAGE_SIZES else 50


def _without(query: QueryDict, *names: str) -> str:
    kept = query.copy()
    for name in names:
        kept.pop(name, None)
    return kept.urlencode()


def _search(
    request: DashboardRequest, namespace: Namespace, filterset: MemoryFilter, query: str
) -> tuple[list[dict[str, Any]], float]:
    """The recall engine's best SEARCH_HITS for `query` (the subject, kind and tag filters
    applied by recall itself; any other filter narrows its hits), with their score
    components formatted for the bars."""
    valid = not filterset.is_bound or filterset.is_valid()
    data = filterset.form.cleaned_data if filterset.is_bound and valid else {}
    subject = data.get("subject") or None
    try:
        outcome = recall_memories(
            actor=_actor(request),
            namespace=namespace,
            subject_external_id=subject,
            query=query,
            k=SEARCH_HITS,
            filters=RecallFilters(
                kinds=[data["kind"]] if data.get("kind") else [],
                tags=[tag for tag in (data.get("tag"), data.get("pii")) if tag],
            ),
            log=False,  # the recall log is what apps were served; this read is audited
            every_subject=subject is None,
        )
    except ApplicationError as error:
        messages.error(request, error.message)
        return [], 0.0
    kept = outcome.hits if valid else []
    if kept and any(data.get(name) not in (None, "") for name in POST_FILTERS):
        hit_ids = [hit.memory.pk for hit in kept]
        allowed = set(filterset.qs.filter(pk__in=hit_ids).values_list("pk", flat=True))
        kept = [hit for hit in kept if hit.memory.pk in allowed]
    rows = selectors.memories_opened([hit.memory for hit in kept])
    return [
        {
            "row": row,
            "score": f"{hit.score:.3f}",
            "bars": [
                {
                    "label": f"{name} {hit.components[name]:.3f}",
                    "name": name,
                    "value": f"{hit.components[name]:.2f}",
                    "width": f"{BAR_WIDTH * min(max(hit.components[name], 0.0), 1.0):.1f}",
                }
                for name in COMPONENTS
            ],
        }
        for hit, row in zip(kept, rows, strict=True)
    ], outcome.timings_ms.get("total", 0.0)


@login_required
@require_POST
def bulk(request: DashboardRequest, slug: str) -> HttpResponse:
    """Chosen rows, or every row the filters match: first a review page (the count, a sample,
    a reason), then the change. Deleting is the owner's; archiving and tagging an editor's."""
    namespace = _namespace(
        request, slug, OWNER if request.POST.get("action") == "delete" else EDITOR
    )
    form = BulkForm(request.POST)
    explorer_url = reverse("governance:explorer", kwargs={"slug": slug})
    filters = request.GET.copy()
    filterset = MemoryFilter(filters or None, queryset=selectors.namespace_memories(namespace))
    if not form.is_valid() or (filterset.is_bound and not filterset.is_valid()):
        messages.error(request, _("Choose an action and at least one memory."))
        return redirect(f"{explorer_url}?{filters.urlencode()}")
    data = form.cleaned_data
    chosen = (
        filterset.qs
        if data["select_all"]
        else filterset.qs.filter(pk__in=selectors.uuids_of(request.POST.getlist("ids")))
    )
    if not data["confirm"]:
        plan = selectors.purge_plan(namespace=namespace, memories=chosen)
        content_read_record(
            actor=_actor(request),
            namespace=namespace,
            what="bulk_review",
            memory_ids=[row.memory.pk for row in plan.sample],
        )
        return render(
            request,
            "governance/bulk_review.html",
            _context(
                request,
                namespace,
                form=form,
                plan=plan,
                action_label=ACTION_LABELS[data["action"]],
                ids=request.POST.getlist("ids"),
                filter_string=filters.urlencode(),
            ),
        )
    try:
        outcome = memories_bulk_change(
            actor=_actor(request),
            namespace=namespace,
            memories=chosen,
            action=data["action"],
            reason=data["reason"] or "",
            tag=data["tag"] or "",
        )
    except ApplicationError as error:
        messages.error(request, error.message)
        return redirect(f"{explorer_url}?{filters.urlencode()}")
    messages.success(
        request,
        _("%(action)s: %(count)d memories (audit event #%(event)d).")
        % {
            "action": ACTION_LABELS[data["action"]],
            "count": outcome.count,
            "event": outcome.audit_event_id,
        },
    )
    return redirect(f"{explorer_url}?{filters.urlencode()}")


# --- Purge ---------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def purge(request: DashboardRequest, slug: str) -> HttpResponse:
    """Purge by filter: the dry run (how many, whose, a sample of ten, what else goes), then
    the owner's reason and the typed slug start a job."""
    namespace = _namespace(request, slug, OWNER)
    filterset = MemoryFilter(request.GET or None, queryset=selectors.namespace_memories(namespace))
    filters = filterset.active_filters()
    form = PurgeForm(request.POST or None)
    plan = selectors.purge_plan(namespace=namespace, memories=filterset.qs) if filters else None
    if request.method == "POST" and form.is_valid() and plan is not None:
        try:
            job = purge_start(
                actor=_actor(request),
                namespace=namespace,
                filters=filters,
                reason=form.cleaned_data["reason"],
                confirmation=form.cleaned_data["confirmation"],
                expected=form.cleaned_data["expected"],
            )
        except ApplicationError as error:
            form.add_error(
                "confirmation" if "confirmation" in error.details else None, error.message
            )
        else:
            return redirect("governance:job", slug=slug, job_id=job.id)
    if plan is not None:
        content_read_record(
            actor=_actor(request),
            namespace=namespace,
            what="purge_dry_run",
            memory_ids=[row.memory.pk for row in plan.sample],
        )
        form.initial.setdefault("expected", plan.count)
    return render(
        request,
        "governance/purge.html",
        _context(
            request,
            namespace,
            filterset=filterset,
            plan=plan,
            form=form,
            filter_string=request.GET.urlencode(),
        ),
    )


@login_required
def job(request: DashboardRequest, slug: str, job_id: str) -> HttpResponse:
    """A purge's progress; htmx polls the fragment until the job is done, then shows the
    receipt."""
    namespace = _namespace(request, slug, OWNER)
    found = selectors.purge_job_get(namespace=namespace, job_id=job_id)
    if found is None:
        raise Http404("Job not found.")
    total = max(int(found.result.get("total", 0)), 0)
    done = int(found.result.get("done", 0))
    context = _context(
        request,
        namespace,
        job=found,
        total=total,
        done=done,
        percent=100 if found.status == "succeeded" else (round(100 * done / total) if total else 0),
        finished=found.status in ("succeeded", "failed"),
    )
    template = "governance/job.html"
    if request.htmx:
        template += "#progress"
    return render(request, template, context)


# --- A memory ------------------------------------------------------------------------------


@login_required
def memory_detail(request: DashboardRequest, slug: str, memory_id: str) -> HttpResponse:
    namespace = _namespace(request, slug)
    memory = _memory(namespace, memory_id)
    story = selectors.memory_story(namespace=namespace, memory=memory)
    content_read_record(
        actor=_actor(request),
        namespace=namespace,
        what="memory",
        memory_ids=[memory.pk],
        subject_id=memory.subject_id,
    )
    return render(
        request,
        "governance/memory.html",
        _context(
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
    namespace = _namespace(request, slug, EDITOR)
    memory = _memory(namespace, memory_id)
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
                actor=_actor(request),
                memory=memory,
                content=data["content"],
                reason=data["reason"],
                kind=data["kind"],
                tags=data["tags"],
                importance=data["importance"],
            )
        except ApplicationError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, _("Saved."))
            return redirect("governance:memory", slug=slug, memory_id=memory.pk)
    if request.method == "GET":
        content_read_record(
            actor=_actor(request),
            namespace=namespace,
            what="memory_edit",
            memory_ids=[memory.pk],
            subject_id=memory.subject_id,
        )
    return render(
        request,
        "governance/memory_edit.html",
        _context(request, namespace, memory=memory, form=form),
    )


MEMORY_ACTIONS = {
    "approve": memory_approve,
    "archive": memory_archive,
    "restore": memory_restore,
    "rollback": memory_supersede_rollback,
}


@login_required
@require_POST
def memory_action(request: DashboardRequest, slug: str, memory_id: str) -> HttpResponse:
    """Approve, archive (with an undo), restore, or roll back a supersede."""
    namespace = _namespace(request, slug, EDITOR)
    memory = _memory(namespace, memory_id)
    name = request.POST.get("action", "")
    action = MEMORY_ACTIONS.get(name)
    detail = reverse("governance:memory", kwargs={"slug": slug, "memory_id": memory.pk})
    if action is None:
        messages.error(request, _("Unknown action."))
        return _back(request, detail)
    try:
        action(actor=_actor(request), memory=memory)
    except ApplicationError as error:
        messages.error(request, error.message)
        return _back(request, detail)
    if request.htmx and request.POST.get("from") == "review":
        return render(
            request,
            "governance/review.html#done",
            _context(
                request, namespace, done_action=name, done_label=ACTION_LABELS[name], memory=memory
            ),
        )
    messages.success(request, _("Done: %(action)s.") % {"action": ACTION_LABELS[name]})
    return _back(request, detail)


@login_required
@require_http_methods(["GET", "POST"])
def memory_remove(request: DashboardRequest, slug: str, memory_id: str) -> HttpResponse:
    """Delete one memory, after a confirmation that names it."""
    namespace = _namespace(request, slug, EDITOR)
    memory = _memory(namespace, memory_id)
    if request.method == "POST":
        memory_delete(actor=_actor(request), memory=memory)
        messages.success(request, _("Memory %(id)s deleted.") % {"id": memory.pk})
        return redirect("governance:explorer", slug=slug)
    story = selectors.memory_story(namespace=namespace, memory=memory, recall_limit=0)
    content_read_record(
        actor=_actor(request),
        namespace=namespace,
        what="memory_delete",
        memory_ids=[memory.pk],
        subject_id=memory.subject_id,
    )
    return render(
        request,
        "governance/memory_delete.html",
        _context(request, namespace, memory=memory, content=story.content),
    )


# --- Review queue --------------------------------------------------------------------------


@login_required
def review(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = _namespace(request, slug)
    queue = selectors.review_queue(namespace=namespace)
    shown = {item.row.memory.pk for items in queue.values() for item in items} | {
        item.other.memory.pk for item in queue["duplicate"] if item.other
    }
    content_read_record(actor=_actor(request), namespace=namespace, what="review", memory_ids=shown)
    return render(
        request,
        "governance/review.html",
        _context(
            request,
            namespace,
            queue=queue,
            total=sum(len(items) for items in queue.values()),
        ),
    )


@login_required
@require_POST
def review_merge(request: DashboardRequest, slug: str) -> HttpResponse:
    """Merge a duplicate pair: `keep` stays; `other` is superseded by it, linked."""
    namespace = _namespace(request, slug, EDITOR)
    keep = _memory(namespace, request.POST.get("keep", ""))
    other = _memory(namespace, request.POST.get("other", ""))
    queue_url = reverse("governance:review", kwargs={"slug": slug})
    try:
        memory_merge(actor=_actor(request), keep=keep, other=other)
    except ApplicationError as error:
        messages.error(request, error.message)
        return _back(request, queue_url)
    if request.htmx:
        return render(
            request,
            "governance/review.html#done",
            _context(
                request,
                namespace,
                done_action="merge",
                done_label=ACTION_LABELS["merge"],
                memory=keep,
            ),
        )
    messages.success(request, _("Merged."))
    return _back(request, queue_url)


# --- Subjects ------------------------------------------------------------------------------


@login_required
def subjects(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = _namespace(request, slug)
    search = request.GET.get("q", "").strip()[:255]
    found = selectors.subject_list(namespace=namespace, search=search)
    size = _page_size(request.GET.get("size"))
    try:
        offset = max(int(request.GET.get("offset", 0)), 0)
    except ValueError:
        offset = 0
    total = found.count()
    rows = list(found[offset : offset + size])
    template = "governance/subjects.html"
    if request.htmx and not request.htmx.boosted:
        template += "#results"
    return render(
        request,
        template,
        _context(
            request,
            namespace,
            rows=rows,
            total=total,
            start=offset + 1 if rows else 0,
            end=offset + len(rows),
            next_offset=offset + size if offset + size < total else None,
            previous_offset=max(offset - size, 0) if offset else None,
            search=search,
            size=size,
            sizes=PAGE_SIZES,
        ),
    )


def _subject(namespace: Namespace, subject_id: str) -> Any:
    subject = selectors.subject_by_id(namespace=namespace, subject_id=subject_id)
    if subject is None:
        raise Http404("Subject not found.")
    return subject


@login_required
def subject_detail(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    namespace = _namespace(request, slug)
    subject = _subject(namespace, subject_id)
    counts, sessions = selectors.subject_overview(subject=subject)
    content_read_record(
        actor=_actor(request), namespace=namespace, what="subject", subject_id=subject.pk
    )
    explorer_url = reverse("governance:explorer", kwargs={"slug": slug})
    return render(
        request,
        "governance/subject.html",
        _context(
            request,
            namespace,
            subject=subject,
            counts=counts,
            sessions=sessions,
            explorer_url=explorer_url,
        ),
    )


@login_required
def subject_download(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    """The subject's export (the API's schema'd JSON document), as a download. Audited by
    the export itself."""
    namespace = _namespace(request, slug, EDITOR)
    subject = _subject(namespace, subject_id)
    document = subject_export(actor=_actor(request), subject=subject)
    response = HttpResponse(
        json.dumps(document, ensure_ascii=False, indent=2), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="subject-{subject.pk}.json"'
    return response


@login_required
@require_POST
def subject_pause(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    """Pause or resume capture of the subject's conversations."""
    namespace = _namespace(request, slug, EDITOR)
    subject = _subject(namespace, subject_id)
    paused = request.POST.get("paused") == "1"
    subject_set_paused(actor=_actor(request), subject=subject, paused=paused)
    messages.success(request, _("Capture paused.") if paused else _("Capture resumed."))
    return redirect("governance:subject", slug=slug, subject_id=subject.pk)


@login_required
@require_http_methods(["GET", "POST"])
def subject_remove(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    """Erase a subject (crypto-shredding): typed confirmation, then the receipt."""
    namespace = _namespace(request, slug, OWNER)
    subject = _subject(namespace, subject_id)
    form = EraseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["confirmation"] != subject.external_id:
            form.add_error("confirmation", _("That is not this subject's id."))
        else:
            receipt = subject_erase(actor=_actor(request), subject=subject)
            return render(
                request,
                "governance/erased.html",
                _context(request, namespace, receipt=receipt.as_dict()),
            )
    counts, _sessions = selectors.subject_overview(subject=subject, sessions=0)
    return render(
        request,
        "governance/subject_erase.html",
        _context(request, namespace, subject=subject, form=form, counts=counts),
    )
