"""Subjects: the list, a subject's page, export, pause, erase."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from apps.dashboard.pages import (
    EDITOR,
    OWNER,
    PAGE_SIZES,
    DashboardRequest,
    actor_of,
    namespace_for_request,
    page_context,
    page_size,
    subject_for,
)
from apps.dashboard.subjects.forms import (
    EraseForm,
)
from apps.governance import selectors
from apps.governance.services import content_read_record
from apps.memories.services import (
    subject_erase,
    subject_export,
    subject_set_paused,
)
from apps.pipeline.timeline import fact_timelines
from apps.privacy.models import Flow
from apps.privacy.services import LOCALES, portal_link_create
from memoryhub.replica import reading_from_replica

# --- Subjects ------------------------------------------------------------------------------


@login_required
def subjects(request: DashboardRequest, slug: str) -> HttpResponse:
    """The namespace's subjects, a page at a time, read from the replica when it may serve
    the request (memoryhub/replica.py)."""
    namespace = namespace_for_request(request, slug)
    search = request.GET.get("q", "").strip()[:255]
    found = selectors.subject_list(namespace=namespace, search=search)
    size = page_size(request.GET.get("size"))
    try:
        offset = max(int(request.GET.get("offset", 0)), 0)
    except ValueError:
        offset = 0
    total, rows = reading_from_replica(lambda: (found.count(), list(found[offset : offset + size])))
    template = "dashboard/subjects/subjects.html"
    if request.htmx and not request.htmx.boosted:
        template += "#results"
    return render(
        request,
        template,
        page_context(
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


@login_required
def subject_detail(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug)
    subject = subject_for(namespace, subject_id)
    counts, sessions = selectors.subject_overview(subject=subject)
    timelines = fact_timelines(subject=subject)
    content_read_record(
        actor=actor_of(request), namespace=namespace, what="subject", subject_id=subject.pk
    )
    explorer_url = reverse("dashboard:memories:list", kwargs={"slug": slug})
    return render(
        request,
        "dashboard/subjects/subject.html",
        page_context(
            request,
            namespace,
            subject=subject,
            counts=counts,
            sessions=sessions,
            timelines=timelines,
            explorer_url=explorer_url,
            portal_flows=Flow.choices,
            portal_languages=settings.LANGUAGES,
        ),
    )


@login_required
def subject_download(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    """The subject's export (the API's schema'd JSON document), as a download. Audited by
    the export itself."""
    namespace = namespace_for_request(request, slug, EDITOR)
    subject = subject_for(namespace, subject_id)
    document = subject_export(actor=actor_of(request), subject=subject)
    response = HttpResponse(
        json.dumps(document, ensure_ascii=False, indent=2), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="subject-{subject.pk}.json"'
    return response


@login_required
@require_POST
def subject_pause(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    """Pause or resume capture of the subject's conversations."""
    namespace = namespace_for_request(request, slug, EDITOR)
    subject = subject_for(namespace, subject_id)
    paused = request.POST.get("paused") == "1"
    subject_set_paused(actor=actor_of(request), subject=subject, paused=paused)
    messages.success(request, _("Capture paused.") if paused else _("Capture resumed."))
    return redirect("dashboard:subjects:detail", slug=slug, subject_id=subject.pk)


@login_required
@require_http_methods(["GET", "POST"])
def subject_remove(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    """Erase a subject (crypto-shredding): typed confirmation, then the receipt."""
    namespace = namespace_for_request(request, slug, OWNER)
    subject = subject_for(namespace, subject_id)
    form = EraseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["confirmation"] != subject.external_id:
            form.add_error("confirmation", _("That is not this subject's id."))
        else:
            receipt = subject_erase(actor=actor_of(request), subject=subject, via="dashboard")
            return render(
                request,
                "dashboard/subjects/erased.html",
                page_context(request, namespace, receipt=receipt.as_dict()),
            )
    counts, _sessions = selectors.subject_overview(subject=subject, sessions=0)
    return render(
        request,
        "dashboard/subjects/subject_erase.html",
        page_context(request, namespace, subject=subject, form=form, counts=counts),
    )


@login_required
@require_POST
def subject_portal_link(request: DashboardRequest, slug: str, subject_id: str) -> HttpResponse:
    """A one-time link to the privacy portal for this subject, shown once, to hand to the
    person (by a channel the team trusts): it works once, for a few minutes. Owners only:
    whoever opens it can erase the subject, which only owners may do here."""
    namespace = namespace_for_request(request, slug, OWNER)
    subject = subject_for(namespace, subject_id)
    flow = request.POST.get("flow", Flow.OVERVIEW)
    locale = request.POST.get("locale", "en")
    issued = portal_link_create(
        actor=actor_of(request),
        namespace=namespace,
        subject=subject,
        base_url=settings.MEMORYHUB_PUBLIC_URL or request.build_absolute_uri("/"),
        flow=flow if flow in Flow.values else Flow.OVERVIEW,
        locale=locale if locale in LOCALES else "en",
    )
    return render(
        request,
        "dashboard/subjects/portal_link.html",
        page_context(request, namespace, subject=subject, issued=issued),
    )
