"""The explorer (list, filters, search), bulk changes and purges."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from apps.dashboard import pages
from apps.dashboard.memories.forms import (
    BulkForm,
    PurgeForm,
    SearchForm,
)
from apps.dashboard.memories.sorting import SortForm, column_links
from apps.dashboard.pages import (
    ACTION_LABELS,
    EDITOR,
    OWNER,
    PAGE_SIZES,
    DashboardRequest,
    actor_of,
    namespace_for_request,
    page_context,
    page_size,
)
from apps.governance import selectors
from apps.governance.filters import SUPERSEDED, MemoryFilter
from apps.governance.services import content_read_record, purge_start
from apps.governance.sorting import ORDERS
from apps.memories.row_encryption import KeyCache
from apps.memories.services import (
    memories_bulk_change,
)
from apps.namespaces.models import Namespace
from apps.recall.config import config_of
from apps.recall.relevance import DEFAULT_MIN_RELEVANCE
from apps.recall.search import RecallRequest, recall_memories
from apps.recall.statements import RecallFilters
from memoryhub.exceptions import ApplicationError
from memoryhub.replica import reading_from_replica

COMPONENTS = ("vector", "context", "keyword", "boosts", "recency", "importance")
BAR_WIDTH = 48
SEARCH_HITS = 20
# Filters the recall engine does not apply itself: they narrow its hits afterwards.
POST_FILTERS = ("status", "source", "since", "until", "confidence_below")


@login_required
def namespace_pick(request: DashboardRequest) -> HttpResponse:
    """The Memories link: the explorer of the one namespace, or a list to choose from."""
    return pages.namespace_pick(request, "dashboard:memories:list", _("Memories"))


# --- Explorer ------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def explorer(request: DashboardRequest, slug: str) -> HttpResponse:
    """Newest first, filtered by the query string; with a query (POSTed: its text stays out
    of addresses and logs), the recall engine's hits with their score components. The list
    is read from the replica when it may serve the request (memoryhub/replica.py)."""
    namespace = namespace_for_request(request, slug)
    filters = request.GET.copy()
    if request.method == "POST":
        # htmx sends the filter form as it stands (hx-include), which may be newer than the
        # page's address; without JavaScript the form's address carries them.
        for name in (*MemoryFilter.base_filters, "sort"):
            if name in request.POST:
                filters[name] = request.POST[name]
    filterset = MemoryFilter(filters or None, queryset=selectors.namespace_memories(namespace))
    size = page_size(request.GET.get("size"))
    searching = request.method == "POST"
    sort_form = SortForm(filters if "sort" in filters else None, searching=searching)
    sort = sort_form.chosen()
    context = page_context(
        request,
        namespace,
        filterset=filterset,
        size=size,
        sizes=PAGE_SIZES,
        search=SearchForm(request.POST or None),
        query_string=_without(request.GET, "after", "before"),
        filter_string=_without(request.GET, "after", "before", "size"),
        filtered=bool(filterset.is_bound and filterset.is_valid() and filterset.active_filters()),
        sort_form=sort_form,
        sort=sort,
        sort_label=ORDERS[sort].label,
        columns=column_links(request.GET, sort),
    )
    shown: list[Any] = []
    if searching and context["search"].is_valid():
        status = filters.get("status")
        context["search_active_only"] = status not in (None, "", "active", SUPERSEDED)
        context["hits"], context["search_ms"] = _search(
            request, namespace, filterset, context["search"].cleaned_data["q"], sort
        )
        shown = [hit["row"].memory.pk for hit in context["hits"]]
    elif not filterset.is_bound or filterset.is_valid():
        page = reading_from_replica(
            lambda: selectors.explorer_page(
                memories=filterset.qs,
                size=size,
                after=request.GET.get("after", ""),
                before=request.GET.get("before", ""),
                sort=sort,
            )
        )
        context["page"] = page
        shown = [row.memory.pk for row in page.rows]
    content_read_record(actor=actor_of(request), namespace=namespace, what="list", memory_ids=shown)
    template = "dashboard/memories/explorer.html"
    if request.htmx and not request.htmx.boosted:
        template += "#results"
    return render(request, template, context)


def _without(query: QueryDict, *names: str) -> str:
    kept = query.copy()
    for name in names:
        kept.pop(name, None)
    return kept.urlencode()


def _search(
    request: DashboardRequest,
    namespace: Namespace,
    filterset: MemoryFilter,
    query: str,
    sort: str,
) -> tuple[list[dict[str, Any]], float]:
    """The recall engine's best SEARCH_HITS for `query` (the subject, kind and tag filters
    applied by recall itself; any other filter narrows its hits), in the order `sort`
    names (the engine's, by relevance, by default), with their score components formatted
    for the bars."""
    valid = not filterset.is_bound or filterset.is_valid()
    data = filterset.form.cleaned_data if filterset.is_bound and valid else {}
    subject = data.get("subject") or None
    keys = KeyCache()  # one per request: recall and the snippets share the unwrapped keys
    try:
        outcome = recall_memories(
            RecallRequest(
                actor=actor_of(request),
                namespace=namespace,
                keys=keys,
                subject_external_id=subject,
                query=query,
                k=SEARCH_HITS,
                filters=RecallFilters(
                    kinds=[data["kind"]] if data.get("kind") else [],
                    tags=[tag for tag in (data.get("tag"), data.get("pii")) if tag],
                    # The Superseded filter searches history (below, it keeps only history).
                    include_history=data.get("status") == SUPERSEDED,
                ),
                log=False,  # the recall log is what apps were served; this read is audited
                every_subject=subject is None,
                # Below the namespace's relevance floor (the recommended one when it sets none)
                # nothing matched: a query about nothing stored shows no "hits".
                min_relevance=_floor(namespace),
            )
        )
    except ApplicationError as error:
        messages.error(request, error.localized)
        return [], 0.0
    kept = outcome.hits if valid else []
    if kept and any(data.get(name) not in (None, "") for name in POST_FILTERS):
        hit_ids = [hit.memory.pk for hit in kept]
        allowed = set(filterset.qs.filter(pk__in=hit_ids).values_list("pk", flat=True))
        kept = [hit for hit in kept if hit.memory.pk in allowed]
    order = ORDERS[sort]
    if order.field:
        kept.sort(key=lambda hit: (getattr(hit.memory, order.field), hit.memory.pk))
        if order.descending:
            kept.reverse()
    rows = selectors.memories_opened([hit.memory for hit in kept], keys)
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


def _floor(namespace: Namespace) -> float:
    floor = config_of(namespace.recall_config).min_relevance
    return DEFAULT_MIN_RELEVANCE if floor is None else floor


@login_required
@require_POST
def bulk(request: DashboardRequest, slug: str) -> HttpResponse:
    """Chosen rows, or every row the filters match: first a review page (the count, a sample,
    a reason), then the change. Deleting is the owner's; archiving and tagging an editor's."""
    namespace = namespace_for_request(
        request, slug, OWNER if request.POST.get("action") == "delete" else EDITOR
    )
    form = BulkForm(request.POST)
    explorer_url = reverse("dashboard:memories:list", kwargs={"slug": slug})
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
            actor=actor_of(request),
            namespace=namespace,
            what="bulk_review",
            memory_ids=[row.memory.pk for row in plan.sample],
        )
        return render(
            request,
            "dashboard/memories/bulk_review.html",
            page_context(
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
            actor=actor_of(request),
            namespace=namespace,
            memories=chosen,
            action=data["action"],
            reason=data["reason"] or "",
            tag=data["tag"] or "",
        )
    except ApplicationError as error:
        messages.error(request, error.localized)
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
    namespace = namespace_for_request(request, slug, OWNER)
    filterset = MemoryFilter(request.GET or None, queryset=selectors.namespace_memories(namespace))
    filters = filterset.active_filters()
    form = PurgeForm(request.POST or None)
    plan = selectors.purge_plan(namespace=namespace, memories=filterset.qs) if filters else None
    if request.method == "POST" and form.is_valid() and plan is not None:
        try:
            job = purge_start(
                actor=actor_of(request),
                namespace=namespace,
                filters=filters,
                reason=form.cleaned_data["reason"],
                confirmation=form.cleaned_data["confirmation"],
                expected=form.cleaned_data["expected"],
            )
        except ApplicationError as error:
            form.add_error(
                "confirmation" if "confirmation" in error.details else None, error.localized
            )
        else:
            return redirect("dashboard:memories:job", slug=slug, job_id=job.id)
    if plan is not None:
        content_read_record(
            actor=actor_of(request),
            namespace=namespace,
            what="purge_dry_run",
            memory_ids=[row.memory.pk for row in plan.sample],
        )
        form.initial.setdefault("expected", plan.count)
    return render(
        request,
        "dashboard/memories/purge.html",
        page_context(
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
    namespace = namespace_for_request(request, slug, OWNER)
    found = selectors.purge_job_get(namespace=namespace, job_id=job_id)
    if found is None:
        raise Http404("Job not found.")
    total = max(int(found.result.get("total", 0)), 0)
    done = int(found.result.get("done", 0))
    context = page_context(
        request,
        namespace,
        job=found,
        total=total,
        done=done,
        percent=100 if found.status == "succeeded" else (round(100 * done / total) if total else 0),
        finished=found.status in ("succeeded", "failed"),
    )
    template = "dashboard/memories/job.html"
    if request.htmx:
        template += "#progress"
    return render(request, template, context)
