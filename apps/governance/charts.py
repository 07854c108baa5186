"""The overview's charts: pygal SVG rendered on the server, shown as images (an SVG image
runs no script and needs nothing from the network), each with its figures as a table too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

import pygal
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.governance.figures import Overview
from apps.memories.models import Kind
from memoryhub.charts import (
    Chart,
    chart_config,
    chart_images,
    clipped,
    off_scale,
    outlier_scale,
)


def _labels(days: Sequence[date]) -> list[str]:
    return [day.strftime("%m-%d") for day in days]


def per_day(
    *,
    title: str,
    y_title: str,
    x_title: str,
    days: Sequence[date],
    series: dict[str, Sequence[float | int | None]],
    kind: str = "bar",
    alt: str,
    top: float | None = None,
    off_scale_name: str = "",
) -> Chart:
    """A per-day chart of one or more named series: stacked bars, bars or lines. With `top`,
    the y axis ends there: larger values are drawn at the top edge, and a dot named
    `off_scale_name` marks their days. The table holds every value as it is."""
    factory = {"stacked": pygal.StackedBar, "bar": pygal.Bar, "line": pygal.Line}[kind]
    config = chart_config(title, x_title, y_title)
    if top is not None:
        config["range"] = (0, top)
    chart = factory(**config)
    chart.x_labels = _labels(days)
    chart.show_legend = len(series) > 1 or top is not None
    for name, values in series.items():
        chart.add(name, list(values) if top is None else clipped(values, top))
    if top is not None:
        above = off_scale(series.values(), top)
        chart.add(
            off_scale_name, [top if out else None for out in above], stroke=False, dots_size=6
        )
    rows = [
        [
            day.isoformat(),
            *("—" if values[i] is None else str(values[i]) for values in series.values()),
        ]
        for i, day in enumerate(days)
    ]
    wide, narrow = chart_images(chart)
    return Chart(title, wide, alt, [x_title, *series], rows, narrow)


def _cell(value: float | int | None) -> str:
    return "—" if value is None else str(value)


def totals(*, title: str, y_title: str, values: dict[str, int], alt: str) -> Chart:
    """One bar per named total."""
    chart = pygal.Bar(
        **{
            **chart_config(title, "", y_title),
            "x_labels_major_every": None,
            "show_minor_x_labels": True,
        }
    )
    chart.x_labels = list(values)
    chart.add(y_title, list(values.values()))
    chart.show_legend = False
    wide, narrow = chart_images(chart, x_label_rotation=35)  # names side by side would touch
    return Chart(title, wide, alt, ["", y_title], [[k, str(v)] for k, v in values.items()], narrow)


def latency_per_day(
    days: Sequence[date], p50: Sequence[float | None], p95: Sequence[float | None]
) -> Chart:
    """Recall time per day as median and 95th percentile, on a scale that one slow request
    (a model loading, a cold cache) cannot set: outliers are marked off the scale."""
    top = outlier_scale([*p50, *p95])
    alt = _("Median and 95th-percentile server time of recalls, per day.")
    off_scale_name = ""
    if top is not None:
        off_days = sum(off_scale([p50, p95], top))
        off_scale_name = _("Off the scale (above %(top)d ms)") % {"top": top}
        alt += " " + ngettext(
            "%(n)d day is off the scale (above %(top)d ms); the table gives its figures.",
            "%(n)d days are off the scale (above %(top)d ms); the table gives their figures.",
            off_days,
        ) % {"n": off_days, "top": top}
    return per_day(
        title=_("Recall latency per day"),
        x_title=_("Day"),
        y_title=_("Milliseconds"),
        days=days,
        series={"p50": p50, "p95": p95},
        kind="line",
        alt=alt,
        top=top,
        off_scale_name=off_scale_name,
    )


def overview_charts(figures: Overview) -> list[Chart]:
    """The overview's six charts, titled and described in the active language."""
    days = figures.days
    # The kinds' short names: their labels without the explanation in brackets (either kind).
    kind_names = {kind.value: re.split(r"\s*[(\uff08]", str(kind.label))[0] for kind in Kind}
    status_names = {
        "active": _("Active"),
        "archived": _("Archived"),
        "pending_review": _("Pending review"),
        "superseded": _("Superseded"),
    }
    new = sum(sum(values) for values in figures.new_memories.values())
    recalls = sum(figures.recalls)
    return [
        per_day(
            title=_("New memories per day, by kind"),
            x_title=_("Day"),
            y_title=_("Memories"),
            days=days,
            series={kind_names[k]: v for k, v in figures.new_memories.items()},
            kind="stacked",
            alt=_("%(n)d memories written in the last 30 days.") % {"n": new},
        ),
        totals(
            title=_("Memories by status, now"),
            y_title=_("Memories"),
            values={str(status_names[k]): v for k, v in figures.status_totals.items()},
            alt=", ".join(f"{status_names[k]}: {v}" for k, v in figures.status_totals.items()),
        ),
        per_day(
            title=_("Ingested turns and failed jobs per day"),
            x_title=_("Day"),
            y_title=_("Count"),
            days=days,
            series={_("Turns"): figures.turns, _("Failed jobs"): figures.failed_jobs},
            alt=_("%(turns)d turns ingested, %(failed)d jobs failed in the last 30 days.")
            % {"turns": sum(figures.turns), "failed": sum(figures.failed_jobs)},
        ),
        per_day(
            title=_("Recalls per day"),
            x_title=_("Day"),
            y_title=_("Requests"),
            days=days,
            series={_("Recalls and context assemblies"): figures.recalls},
            alt=_("%(n)d recalls in the last 30 days.") % {"n": recalls},
        ),
        latency_per_day(days, figures.recall_p50, figures.recall_p95),
        per_day(
            title=_("Tokens served by context assembly per day"),
            x_title=_("Day"),
            y_title=_("Tokens"),
            days=days,
            series={_("Tokens"): figures.tokens},
            alt=_("%(n)d tokens served in the last 30 days.") % {"n": sum(figures.tokens)},
        ),
    ]
