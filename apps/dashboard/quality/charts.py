"""The quality overview's trend: each eval set's figures over its finished runs."""

from __future__ import annotations

from django.utils.translation import gettext as _

from apps.evaluation.selectors import SetSummary
from memoryhub.charts import Chart, lines
from memoryhub.words import WORDS

TREND = ("recall@5", "recall@10", "mrr", "abstention_recall")


def trend_charts(summaries: list[SetSummary]) -> dict[str, Chart]:
    """A chart per eval set with two finished runs or more, keyed by the set's id."""
    charts = {}
    for summary in summaries:
        runs = summary.history
        if len(runs) < 2:
            continue
        labels = [
            f"{run.created_at:%m-%d %H:%M} {str(WORDS.get(f'run:{run.label}', run.label))[:18]}"
            for run in runs
        ]
        legend = {"mrr": "MRR", "abstention_recall": _("Abstention")}
        series = {
            legend.get(name, name): [run.metrics.get(name) for run in runs]
            for name in TREND
            if any(name in run.metrics for run in runs)
        }
        charts[str(summary.eval_set.pk)] = lines(
            title=_("%(set)s over its runs") % {"set": summary.eval_set.name},
            x_title=_("Run (time, configuration)"),
            y_title=_("Share of cases (0 to 1)"),
            labels=labels,
            series=series,
            alt=_("Recall@5, recall@10, MRR and abstention of the last %(n)d runs.")
            % {"n": len(runs)},
            y_range=(0.0, 1.0),
        )
    return charts
