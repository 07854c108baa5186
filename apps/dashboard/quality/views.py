"""The quality pages of a namespace: the overview (each eval set's latest run and trend,
the variants, the configuration in force), an eval set (its cases, its runs, a new run), a
run (figures, per category, per case; a case's recall with its score components), the
comparison of two runs, and the actions: import, make from feedback, add a case from a
recall, save, promote and delete a variant.

Who: viewers read; editors make sets, cases, variants and runs; owners promote a variant to
the namespace's configuration. Another namespace's set, run, case or variant is a 404.
Pages that show questions or memory text are not cached and record the read in the audit
log (ids and counts, never text). One view and one template serve a page and its htmx
fragment.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.audit.services import audit_record
from apps.dashboard.pages import (
    EDITOR,
    OWNER,
    VIEWER,
    DashboardRequest,
    actor_of,
    form_post,
    form_post_elsewhere,
    namespace_for_request,
    namespace_pick,
    page_context,
)
from apps.dashboard.quality.charts import trend_charts
from apps.dashboard.quality.forms import (
    CaseFromRecallForm,
    EmptySetForm,
    FeedbackSetForm,
    ImportForm,
    RunForm,
    VariantForm,
)
from apps.evaluation import selectors, services
from apps.evaluation.models import EvalCase, RunStatus
from apps.memories.row_encryption import KeyCache
from apps.namespaces.models import Namespace
from apps.recall.config import config_of
from apps.recall.models import RecallLog
from apps.recall.services import recall_query
from memoryhub.exceptions import NotFound


def _found(call: Any, **kwargs: Any) -> Any:
    try:
        return call(**kwargs)
    except NotFound:
        raise Http404("Not found.") from None


def _read_record(
    request: DashboardRequest,
    namespace: Namespace,
    what: str,
    cases: list[EvalCase],
    memory_ids: list[str] = (),  # type: ignore[assignment]
) -> None:
    """Record that questions (and memory texts) were shown: ids and counts, and whose they
    are, so each subject finds the read in the portal's access history."""
    if not cases and not memory_ids:
        return
    subjects = sorted({str(case.subject_id) for case in cases if case.subject_id})
    details: dict[str, Any] = {"cases": len(cases)}
    if len(subjects) > 1:
        details["subjects"] = subjects
    if memory_ids:
        details["memory_ids"] = list(memory_ids)
    audit_record(
        actor=actor_of(request),
        action=f"dashboard.read.{what}",
        namespace=namespace,
        subject_id=cases[0].subject_id if len(subjects) == 1 else None,
        object_type="eval_case" if len(cases) == 1 else "eval_set",
        object_id=str(cases[0].pk if len(cases) == 1 else cases[0].eval_set_id) if cases else "",
        details=details,
    )


@login_required
@require_GET
def quality_pick(request: DashboardRequest) -> HttpResponse:
    """The Quality link: the one namespace's quality page, or a list to choose from."""
    return namespace_pick(request, "dashboard:quality:overview", _("Quality"))


@login_required
@require_GET
def overview(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug)
    summaries = selectors.sets_overview(namespace=namespace)
    config = config_of(namespace.recall_config)
    context = page_context(
        request,
        namespace,
        summaries=summaries,
        charts=trend_charts(summaries),
        variants=selectors.variants(namespace=namespace),
        config=config.full(),
        config_changed=sorted(config.as_dict()),
        promoted=selectors.last_promotion(namespace=namespace),
        # Four forms on one page, each a name field: each its own ids (the names POSTed
        # stay the same), so every label points at its own form's field.
        import_form=ImportForm(auto_id="import-%s"),
        feedback_form=FeedbackSetForm(initial={"days": 30}, auto_id="feedback-%s"),
        empty_form=EmptySetForm(auto_id="empty-set-%s"),
        variant_form=VariantForm(initial=VariantForm.initial_from(config), auto_id="variant-%s"),
    )
    return render(request, "dashboard/quality/overview.html", context)


@login_required
@require_POST
def set_import(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, EDITOR)
    return form_post_elsewhere(
        request,
        ImportForm(request.POST, request.FILES),
        lambda data: services.eval_set_import_file(
            actor=actor_of(request),
            namespace=namespace,
            name=data["name"],
            file_format=data["format"],
            raw=data["file"].read(),
            subject_external_id=data["subject"],
        ),
        back_url=_overview_url(slug),
        success_url=lambda eval_set: _set_url(slug, eval_set.pk),
        success_message=lambda eval_set: _("Imported %(n)d cases.") % {"n": eval_set.cases.count()},
        invalid_message=_("The import was not started: %(errors)s"),
    )


def _overview_url(slug: str, part: str = "") -> str:
    return reverse("dashboard:quality:overview", args=[slug]) + part


def _set_url(slug: str, set_id: object) -> str:
    return reverse("dashboard:quality:set", args=[slug, set_id])


@login_required
@require_POST
def set_from_feedback(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, EDITOR)
    return form_post_elsewhere(
        request,
        FeedbackSetForm(request.POST),
        lambda data: services.eval_set_from_feedback(
            actor=actor_of(request), namespace=namespace, name=data["name"], days=data["days"]
        ),
        back_url=_overview_url(slug),
        success_url=lambda eval_set: _set_url(slug, eval_set.pk),
        success_message=lambda eval_set: (
            _("Made %(n)d cases from feedback.") % {"n": eval_set.cases.count()}
        ),
    )


@login_required
@require_POST
def set_create(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, EDITOR)
    return form_post_elsewhere(
        request,
        EmptySetForm(request.POST),
        lambda data: services.eval_set_create_empty(
            actor=actor_of(request), namespace=namespace, name=data["name"]
        ),
        back_url=_overview_url(slug),
        success_url=lambda eval_set: _set_url(slug, eval_set.pk),
    )


@login_required
@never_cache
def set_detail(request: DashboardRequest, slug: str, set_id: str) -> HttpResponse:
    """An eval set: a page of its cases (questions decrypted), its runs (pick two to
    compare), and a new run (POST)."""
    # Viewers see the set; starting a run takes an editor.
    namespace = namespace_for_request(request, slug, EDITOR if request.method == "POST" else VIEWER)
    eval_set = _found(selectors.eval_set_get, namespace=namespace, set_id=set_id)
    form = RunForm(request.POST or None, namespace=namespace, initial={"token_budget": 2000})
    if request.method == "POST":
        started = form_post(
            request,
            form,
            lambda data: services.run_start(
                actor=actor_of(request),
                eval_set=eval_set,
                variant=data["variant"],
                token_budget=data["token_budget"],
            ),
            success_url=lambda run: reverse("dashboard:quality:run", args=[slug, run.pk]),
        )
        if started is not None:
            return started
    cases = selectors.cases_page(
        eval_set=eval_set,
        after=request.GET.get("after", ""),
        before=request.GET.get("before", ""),
    )
    _read_record(request, namespace, "eval_cases", [row.case for row in cases.rows])
    context = page_context(
        request,
        namespace,
        eval_set=eval_set,
        rows=cases.rows,
        total=cases.total,
        start=cases.start,
        end=cases.end,
        previous_cursor=cases.previous_cursor,
        next_cursor=cases.next_cursor,
        runs=selectors.runs_of(eval_set=eval_set),
        form=form,
    )
    return render(request, "dashboard/quality/set.html", context)


@login_required
@require_POST
def set_delete(request: DashboardRequest, slug: str, set_id: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, EDITOR)
    eval_set = _found(selectors.eval_set_get, namespace=namespace, set_id=set_id)
    if request.POST.get("confirm") != eval_set.name:
        messages.error(request, _("Type the set's name to delete it."))
        return redirect("dashboard:quality:set", slug=slug, set_id=eval_set.pk)
    services.eval_set_delete(actor=actor_of(request), eval_set=eval_set)
    messages.success(request, _("The eval set, its cases and its runs were deleted."))
    return redirect("dashboard:quality:overview", slug=slug)


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def case_delete(request: DashboardRequest, slug: str, case_id: str) -> HttpResponse:
    """Delete one case, after a confirmation that names it (its set, number and question)."""
    namespace = namespace_for_request(request, slug, EDITOR)
    case = _found(selectors.case_get, namespace=namespace, case_id=case_id)
    if request.method == "POST":
        services.eval_case_delete(actor=actor_of(request), case=case)
        messages.success(request, _("The case was deleted."))
        return redirect("dashboard:quality:set", slug=slug, set_id=case.eval_set_id)
    question = selectors.open_question(case, KeyCache())
    _read_record(request, namespace, "eval_case", [case])
    context = page_context(request, namespace, case=case, question=question)
    return render(request, "dashboard/quality/case_delete.html", context)


@login_required
@never_cache
def run_detail(request: DashboardRequest, slug: str, run_id: str) -> HttpResponse:
    """A run: its progress while it works (htmx polls the fragment), then its figures, per
    category, and its cases (misses only, a category: in the address)."""
    namespace = namespace_for_request(request, slug)
    run = _found(selectors.run_get, namespace=namespace, run_id=run_id)
    finished = run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED)
    if request.htmx and not finished:
        return render(
            request, "dashboard/quality/run.html#progress", {"run": run, "namespace": namespace}
        )
    misses = request.GET.get("misses") == "1"
    category = request.GET.get("category", "")[:40]
    rows = selectors.run_results(run=run, misses_only=misses, category=category) if finished else []
    _read_record(request, namespace, "eval_results", [row.result.case for row in rows])
    context = page_context(
        request,
        namespace,
        run=run,
        finished=finished,
        figures=[
            (name, run.metrics.get(name)) for name, _ in selectors.HEADLINE if name in run.metrics
        ],
        categories=sorted(run.metrics.get("categories", {}).items()),
        rows=rows,
        misses=misses,
        category=category,
        config=config_of(run.config).full(),
        other_runs=[r for r in selectors.runs_of(eval_set=run.eval_set) if r.pk != run.pk],
    )
    if request.htmx:  # finished while the page polled: the whole page again
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return render(request, "dashboard/quality/run.html", context)


@login_required
@never_cache
@require_GET
def case_result(request: DashboardRequest, slug: str, run_id: str, case_id: str) -> HttpResponse:
    """One case in a run: the question, the memories that answer it, and what recall
    returned, each with its score components."""
    namespace = namespace_for_request(request, slug)
    run = _found(selectors.run_get, namespace=namespace, run_id=run_id)
    result = run.results.select_related("case", "case__subject").filter(case_id=case_id).first()
    if result is None:
        raise Http404("No such case in this run.")
    keys = KeyCache()
    case = result.case
    served = selectors.case_recall(result=result, keys=keys)
    expected = selectors.expected_memories(case=case, keys=keys)
    question = selectors.open_question(case, keys)
    _read_record(
        request,
        namespace,
        "eval_case",
        [case],
        [row.memory_id for row in served] + [m for m, _ in expected],
    )
    context = page_context(
        request,
        namespace,
        run=run,
        result=result,
        case=case,
        question=question,
        served=served,
        expected=expected,
    )
    return render(request, "dashboard/quality/case.html", context)


@login_required
@never_cache
@require_GET
def compare(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug)
    a = _found(selectors.run_get, namespace=namespace, run_id=request.GET.get("a", ""))
    b = _found(selectors.run_get, namespace=namespace, run_id=request.GET.get("b", ""))
    finished = a.status == b.status == RunStatus.SUCCEEDED
    if a.eval_set_id != b.eval_set_id or not finished:
        messages.error(request, _("Compare two finished runs of the same eval set."))
        return redirect("dashboard:quality:set", slug=slug, set_id=a.eval_set_id)
    comparison = selectors.compare(a=a, b=b)
    _read_record(request, namespace, "eval_compare", [change.case for change in comparison.changes])
    context = page_context(request, namespace, comparison=comparison, a=a, b=b)
    return render(request, "dashboard/quality/compare.html", context)


@login_required
@require_POST
def variant_save(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, EDITOR)
    form = VariantForm(request.POST)
    return form_post_elsewhere(
        request,
        form,
        lambda data: services.variant_save(
            actor=actor_of(request), namespace=namespace, name=data["name"], config=form.config()
        ),
        back_url=_overview_url(slug, "#variants"),
        success_message=lambda variant: _("Variant “%(name)s” saved.") % {"name": variant.name},
    )


@login_required
@require_POST
def variant_promote(request: DashboardRequest, slug: str, variant_id: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, OWNER)
    variant = _found(selectors.variant_get, namespace=namespace, variant_id=variant_id)
    services.variant_promote(actor=actor_of(request), variant=variant)
    messages.success(
        request,
        _("“%(name)s” is now the namespace's recall configuration.") % {"name": variant.name},
    )
    return redirect("dashboard:quality:overview", slug=slug)


@login_required
@require_http_methods(["GET", "POST"])
def variant_delete(request: DashboardRequest, slug: str, variant_id: str) -> HttpResponse:
    """Delete one variant, after a confirmation that names it and shows what it changes."""
    namespace = namespace_for_request(request, slug, EDITOR)
    variant = _found(selectors.variant_get, namespace=namespace, variant_id=variant_id)
    if request.method == "POST":
        services.variant_delete(actor=actor_of(request), variant=variant)
        messages.success(request, _("The variant was deleted; its runs are kept."))
        return redirect(reverse("dashboard:quality:overview", args=[slug]) + "#variants")
    context = page_context(request, namespace, variant=variant)
    return render(request, "dashboard/quality/variant_delete.html", context)


@login_required
@never_cache
def case_from_recall(request: DashboardRequest, slug: str, recall_id: str) -> HttpResponse:
    """Add a case to an eval set from a recall-log row: its query (while kept), the memories
    it served to choose the expected ones from."""
    namespace = namespace_for_request(request, slug, EDITOR)
    try:
        log = RecallLog.objects.select_related("subject").get(namespace=namespace, pk=recall_id)
    except RecallLog.DoesNotExist:
        raise Http404("No such recall.") from None
    keys = KeyCache()
    question = recall_query(log=log, keys=keys)
    served = selectors.served_memories(namespace=namespace, log=log, keys=keys)
    form = CaseFromRecallForm(
        request.POST or None,
        namespace=namespace,
        served=[(memory_id, text or _("(deleted)")) for memory_id, text in served],
        initial={"eval_set": request.GET.get("set")},
    )
    if request.method == "POST":
        added = form_post(
            request,
            form,
            lambda data: services.eval_case_from_recall(
                actor=actor_of(request),
                eval_set=data["eval_set"],
                recall_id=str(log.pk),
                expected=data["expected"],
                category=data["category"],
            ),
            success_url=lambda case: _set_url(slug, case.eval_set_id),
            success_message=_("The case was added."),
        )
        if added is not None:
            return added
    if question is not None:
        audit_record(
            actor=actor_of(request),
            action="dashboard.read.recall_query",
            namespace=namespace,
            subject_id=log.subject_id,
            object_type="recall",
            object_id=str(log.pk),
            details={"memory_ids": [m for m, _ in served]},
        )
    context = page_context(request, namespace, log=log, question=question, form=form)
    return render(request, "dashboard/quality/case_new.html", context)
