"""The dashboard's audit viewer: the log with its filters in the address and cursor pages,
an event's detail, the export as JSON lines, and the chain's verification.

Who sees what (apps.namespaces.selectors.audit_scope_for): superusers every event; a
namespace's members the events of their namespaces, owners and editors with the subjects'
external ids, viewers without; anyone else an empty log that says so, and 404 on every other
URL here. The integrity box speaks of the events listed; the verifications' pages and
"verify now" span every namespace: superusers only (members get 403). One view and one
template serve a page and its htmx fragment.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    QueryDict,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.middleware import HtmxDetails

from apps.audit import selectors
from apps.audit.actors import Actor
from apps.audit.models import ChainVerification
from apps.audit.selectors import (
    chain_status_latest,
    chain_verification_get,
    chain_verification_running,
)
from apps.audit.services import audit_export_record
from apps.audit.tasks import chain_verification_request
from apps.dashboard.audit.filters import PAGE_SIZES, AuditEventFilter
from apps.dashboard.audit.forms import VerifyForm
from apps.dashboard.audit.integrity import integrity_box
from apps.dashboard.audit.labels import audit_event_labels
from apps.memories.selectors import subject_suggestions as subject_suggestions_for
from apps.namespaces.selectors import audit_scope_for, audit_scope_namespace, namespace_names
from memoryhub.replica import reading_from_replica


class DashboardRequest(HttpRequest):
    user: User
    htmx: HtmxDetails


def _scope(request: DashboardRequest, *, chain: bool = False) -> selectors.AuditScope:
    """The viewer's scope: 404 without any audit access; 403 for the chain's state unless a
    superuser."""
    scope = audit_scope_for(request.user)
    if not scope.any:
        raise Http404("No audit access.")
    if chain and not scope.everything:
        raise PermissionDenied(_("Only administrators see the state of the whole chain."))
    return scope


def _filterset(request: DashboardRequest, scope: selectors.AuditScope) -> AuditEventFilter:
    return AuditEventFilter(
        request.GET or None, queryset=selectors.audit_events_visible(scope), scope=scope
    )


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


def _chain_context(
    status: ChainVerification | None, scope: selectors.AuditScope
) -> dict[str, object]:
    """The latest walk for the integrity box; a running one and "verify now" for superusers."""
    if not scope.everything:
        return {"status": status}
    return {
        "status": status,
        "running": chain_verification_running(),
        "verify_form": VerifyForm(),
    }


@login_required
@require_GET
def audit_log(request: DashboardRequest) -> HttpResponse:
    """Newest first, filtered by the query string, a cursor page at a time, read from the
    replica when it may serve the request (memoryhub/replica.py). Not the export: it records
    itself in the log before it reads, so it reads the primary, through the event it names.
    The integrity box counts over the list's own query (how many of its events the latest
    walk checked)."""
    scope = audit_scope_for(request.user)
    filterset = _filterset(request, scope)
    size = _page_size(request.GET.get("size"))
    context: dict[str, object] = {
        "scope": scope,
        "filterset": filterset,
        "size": size,
        "sizes": PAGE_SIZES,
        "query_string": _without(request.GET, "after", "before"),
        "filter_string": _without(request.GET, "after", "before", "size"),
        "filtered": bool(filterset.active_filters()),
        "count_cap": selectors.COUNT_CAP,
        # An event's address is the log's plus its id (urls.py): one reverse() per page.
        "log_url": reverse("dashboard:audit:log"),
    }
    if not scope.any:
        return render(request, _template(request, "dashboard/audit/log.html"), context)
    status = chain_status_latest()
    chains, chain_count = selectors.audit_chain_rows(scope, status, name_namespaces=namespace_names)
    context.update(_chain_context(status, scope), chains=chains, chain_count=chain_count)
    if not filterset.is_bound or filterset.is_valid():
        page = reading_from_replica(
            lambda: selectors.audit_page(
                events=filterset.qs,
                size=size,
                after=request.GET.get("after", ""),
                before=request.GET.get("before", ""),
                checked_through=(status.through_event_id or 0) if status else None,
            )
        )
        labels = audit_event_labels(events=page.events, scope=scope)
        context["page"] = page
        context["rows"] = [(event, labels[event.pk]) for event in page.events]
        context["integrity"] = integrity_box(
            page=page,
            status=status,
            scope=scope,
            chain=_listed_chain(filterset, scope),
            chains=chain_count,
            narrowed=bool(set(filterset.active_filters()) - {"namespace"}),
        )
    return render(request, _template(request, "dashboard/audit/log.html"), context)


def _template(request: DashboardRequest, name: str) -> str:
    return name + "#results" if request.htmx and not request.htmx.boosted else name


def _listed_chain(filterset: AuditEventFilter, scope: selectors.AuditScope) -> str:
    """The slug of the one namespace whose chain the list is of ("" for several chains)."""
    chosen = filterset.form.cleaned_data.get("namespace") if filterset.is_bound else ""
    if chosen:
        return str(chosen)
    if not scope.everything and len(scope.namespaces) == 1:
        return next(iter(scope.namespaces))
    return ""


@login_required
@require_GET
def audit_event(request: DashboardRequest, event_id: int) -> HttpResponse:
    """One event, every field, its hash and prev_hash, and its neighbours in the scope."""
    scope = _scope(request)
    view = selectors.audit_event_view(scope=scope, event_id=event_id)
    if view is None:
        raise Http404("Audit event not found.")
    labels = audit_event_labels(events=[view.event], scope=scope)[view.event.pk]
    return render(
        request,
        "dashboard/audit/event.html",
        {"view": view, "event": view.event, "labels": labels},
    )


@login_required
@require_GET
def subject_suggestions(request: DashboardRequest) -> HttpResponse:
    """The external ids starting with what was typed in the subject filter, as the options
    of its <datalist> (htmx swaps them in; without JavaScript the filter takes an external
    id typed in full). Of one namespace (`namespace`, 404 outside the viewer's) or of every
    namespace the viewer may see external ids in; a viewer may see none (403)."""
    scope = _scope(request)
    slug = request.GET.get("namespace", "")
    if slug and slug not in scope.namespaces:
        raise Http404("Namespace not found.")
    chosen = [scope.namespaces[slug]] if slug else list(scope.namespaces.values())
    identifying = [pk for pk in chosen if scope.shows_external_ids(pk)]
    if not identifying:
        raise PermissionDenied(_("Only owners and editors see the subjects' external ids."))
    typed = request.GET.get("subject", "").strip()[:255]
    names = subject_suggestions_for(namespace_ids=identifying, prefix=typed) if typed else []
    return render(request, "dashboard/audit/log.html#suggestions", {"suggestions": names})


@login_required
@require_GET
def audit_export(request: DashboardRequest) -> HttpResponseBase:
    """The events the filters match (in the scope), oldest first, as JSON lines with the
    chain's hashes, up to the newest event when the export starts. Audited (`audit.export`)."""
    scope = _scope(request)
    filterset = _filterset(request, scope)
    if filterset.is_bound and not filterset.is_valid():
        return HttpResponseBadRequest(_("The filters are not valid."), content_type="text/plain")
    through_id = selectors.audit_newest_id()
    slug = request.GET.get("namespace", "")
    if not slug and not scope.everything and len(scope.namespaces) == 1:
        slug = next(iter(scope.namespaces))
    audit_export_record(
        actor=Actor.for_user(request.user, request),
        filters=filterset.active_filters(),
        through_id=through_id,
        namespace=audit_scope_namespace(scope, slug) if slug else None,
    )
    response = StreamingHttpResponse(
        selectors.audit_export_lines(events=filterset.qs, through_id=through_id),
        content_type="application/jsonl; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="audit-through-{through_id}.jsonl"'
    return response


@login_required
@require_POST
def chain_verify(request: DashboardRequest) -> HttpResponse:
    """ "Verify now": start a verification and show its progress."""
    _scope(request, chain=True)
    form = VerifyForm(request.POST)
    full = form.is_valid() and form.cleaned_data["full"]
    verification = chain_verification_request(
        actor=Actor.for_user(request.user, request), full=full
    )
    return redirect("dashboard:audit:verification", verification_id=verification.pk)


@login_required
@require_GET
def chain_verification(request: DashboardRequest, verification_id: int) -> HttpResponse:
    """A verification's progress; htmx polls the fragment until it has finished."""
    _scope(request, chain=True)
    verification = chain_verification_get(verification_id=verification_id)
    if verification is None:
        raise Http404("Verification not found.")
    template = "dashboard/audit/verification.html"
    if request.htmx:
        template += "#progress"
    return render(request, template, {"verification": verification})
