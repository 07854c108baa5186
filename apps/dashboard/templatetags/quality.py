"""Formatting of the quality pages' figures."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import gettext_lazy as _

register = template.Library()

LABELS = {
    "recall@5": "recall@5",
    "recall@10": "recall@10",
    "hit@10": "hit@10",
    "mrr": "MRR",
    "ndcg@10": "nDCG@10",
    "abstention_precision": _("Abstention precision"),
    "abstention_recall": _("Unanswerable cases that found nothing"),
    "latency_p50_ms": _("Latency p50 (ms)"),
    "latency_p95_ms": _("Latency p95 (ms)"),
    "tokens_per_query": _("Prompt tokens per query"),
}


def _is_share(name: str) -> bool:
    return not name.startswith(("latency", "tokens"))


@register.filter
def metric_label(name: str) -> Any:
    return LABELS.get(name, name)


@register.filter
def figure(value: Any, name: str) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if _is_share(name) else f"{value:.1f}"


@register.filter
def metric(values: dict[str, Any] | None, name: str) -> str:
    return figure((values or {}).get(name), name)


@register.filter
def signed(value: Any, name: str) -> str:
    if value is None:
        return "—"
    return f"{value:+.3f}" if _is_share(name) else f"{value:+.1f}"


@register.filter
def get_item(mapping: dict[Any, Any] | None, key: Any) -> Any:
    if not mapping:
        return None
    return mapping.get(key, mapping.get(str(key)))


@register.filter
def config_summary(config: dict[str, Any] | None) -> str:
    """ "weights.vector 0.8, k 5" — what a stored configuration changes."""
    if not config:
        return str(_("nothing (the defaults)"))
    parts = [f"{name} {value}" for name, value in config.items() if name != "weights"]
    parts += [f"{name} {value}" for name, value in (config.get("weights") or {}).items()]
    return ", ".join(parts)
