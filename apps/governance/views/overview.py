"""The overview: charts of the last 30 days, for every namespace the user may see or one."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from apps.governance import charts
from apps.governance.overview import Overview, overview_for
from apps.governance.views.access import (
    DashboardRequest,
    namespace_for_request,
    page_context,
)
from apps.memories.models import Kind
from apps.namespaces.selectors import namespaces_for_user
from memoryhub.health import Health, current_health

# --- Overview ------------------------------------------------------------------------------


@login_required
def overview(request: DashboardRequest, slug: str | None = None) -> HttpResponse:
    """The landing page (every namespace the user may see) and a namespace's own overview:
    per-day charts of the last 30 days, what waits for review, what retention does soon,
    the audit chain's last verification. System status is for operators (staff) only."""
    if slug is not None:
        namespaces = [namespace_for_request(request, slug)]
        context = page_context(request, namespaces[0])
    else:
        namespaces = list(namespaces_for_user(request.user))
        context = {"namespace": None}
    template = "governance/overview.html"
    if request.htmx:  # the system status card polls itself
        return render(request, template + "#status", {"health": _health(request)})
    context.update(
        namespaces=namespaces,
        health=_health(request),
        figures=overview_for(namespaces=namespaces) if namespaces else None,
    )
    if context["figures"] is not None:
        context["charts"] = _charts(context["figures"])
        context["review_total"] = sum(context["figures"].review.values())
    return render(request, template, context)


def _health(request: DashboardRequest) -> Health | None:
    return current_health() if request.user.is_staff else None


def _charts(figures: Overview) -> list[charts.Chart]:
    days = figures.days
    kind_names = {kind.value: str(kind.label).split(" (")[0] for kind in Kind}
    status_names = {
        "active": _("Active"),
        "archived": _("Archived"),
        "pending_review": _("Pending review"),
        "superseded": _("Superseded"),
    }
    new = sum(sum(values) for values in figures.new_memories.values())
    recalls = sum(figures.recalls)
    return [
        charts.per_day(
            title=_("New memories per day, by kind"),
            x_title=_("Day"),
            y_title=_("Memories"),
            days=days,
            series={kind_names[k]: v for k, v in figures.new_memories.items()},
            kind="stacked",
            alt=_("%(n)d memories written in the last 30 days.") % {"n": new},
        ),
        charts.totals(
            title=_("Memories by status, now"),
            y_title=_("Memories"),
            values={str(status_names[k]): v for k, v in figures.status_totals.items()},
            alt=", ".join(f"{status_names[k]}: {v}" for k, v in figures.status_totals.items()),
        ),
        charts.per_day(
            title=_("Ingested turns and failed jobs per day"),
            x_title=_("Day"),
            y_title=_("Count"),
            days=days,
            series={_("Turns"): figures.turns, _("Failed jobs"): figures.failed_jobs},
            alt=_("%(turns)d turns ingested, %(failed)d jobs failed in the last 30 days.")
            % {"turns": sum(figures.turns), "failed": sum(figures.failed_jobs)},
        ),
        charts.per_day(
            title=_("Recalls per day"),
            x_title=_("Day"),
            y_title=_("Requests"),
            days=days,
            series={_("Recalls and context assemblies"): figures.recalls},
            alt=_("%(n)d recalls in the last 30 days.") % {"n": recalls},
        ),
        charts.per_day(
            title=_("Recall latency per day"),
            x_title=_("Day"),
            y_title=_("Milliseconds"),
            days=days,
            series={"p50": figures.recall_p50, "p95": figures.recall_p95},
            kind="line",
            alt=_("Median and 95th-percentile server time of recalls, per day."),
        ),
        charts.per_day(
            title=_("Tokens served by context assembly per day"),
            x_title=_("Day"),
            y_title=_("Tokens"),
            days=days,
            series={_("Tokens"): figures.tokens},
            alt=_("%(n)d tokens served in the last 30 days.") % {"n": sum(figures.tokens)},
        ),
    ]
