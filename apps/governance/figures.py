"""The overview's figures, for the namespaces a user may see (or one of them): what was
remembered, ingested and recalled per day over the last 30 days, what waits for a person,
what retention will do soon, and the audit chain's last verification.

Every figure is one aggregate query over an index (per namespace and time): no page scans
rows one by one, and nothing here decrypts content.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Aggregate, Count, F, FloatField, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from apps.audit.models import ChainVerification
from apps.audit.selectors import chain_status_latest
from apps.memories.models import Kind, Memory, Status
from apps.namespaces.models import Namespace
from apps.pipeline.models import Job, JobStatus, Message
from apps.recall.models import RecallLog

DAYS = 30
SOON_DAYS = 7


class Percentile(Aggregate):
    """PostgreSQL's percentile_cont(fraction) WITHIN GROUP (ORDER BY expression)."""

    function = "percentile_cont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression: Any, fraction: float) -> None:
        super().__init__(expression, fraction=float(fraction))


@dataclass
class Overview:
    days: list[date]
    new_memories: dict[str, list[int]]  # kind -> per day
    status_totals: dict[str, int]  # active, archived, pending_review, superseded
    turns: list[int]
    failed_jobs: list[int]
    recalls: list[int]
    recall_p50: list[float | None]
    recall_p95: list[float | None]
    tokens: list[int]
    retention_due: int = 0
    expiring: int = 0
    chain: ChainVerification | None = None


def _per_day(rows: Iterable[dict[str, Any]], days: list[date], value: str = "n") -> list[Any]:
    by_day = {row["day"]: row[value] for row in rows}
    return [by_day.get(day) or 0 for day in days]


def overview_for(*, namespaces: list[Namespace]) -> Overview:
    """The figures of these namespaces (the user's, already scoped by the caller)."""
    ids = [namespace.pk for namespace in namespaces]
    today = timezone.localdate()
    days = [today - timedelta(days=DAYS - 1 - i) for i in range(DAYS)]
    since = timezone.make_aware(datetime.combine(days[0], time.min))
    day = TruncDate("created_at", tzinfo=timezone.get_current_timezone())

    memories = Memory.objects.filter(namespace__in=ids)
    recent = memories.filter(created_at__gte=since).annotate(day=day)
    by_kind = recent.values("day", "kind").annotate(n=Count("id")).order_by()
    new_memories = {
        kind.value: _per_day((r for r in by_kind if r["kind"] == kind.value), days) for kind in Kind
    }
    totals = memories.aggregate(
        active=Count("id", filter=Q(status=Status.ACTIVE, valid_to__isnull=True)),
        archived=Count("id", filter=Q(status=Status.ARCHIVED)),
        pending_review=Count("id", filter=Q(status=Status.PENDING_REVIEW)),
        superseded=Count("id", filter=Q(valid_to__isnull=False) & ~Q(status=Status.ARCHIVED)),
    )

    turns = (
        Message.objects.filter(session__namespace__in=ids, created_at__gte=since)
        .annotate(day=day)
        .values("day")
        .annotate(n=Count("id"))
        .order_by()
    )
    failed = (
        Job.objects.filter(namespace__in=ids, status=JobStatus.FAILED, created_at__gte=since)
        .annotate(day=day)
        .values("day")
        .annotate(n=Count("id"))
        .order_by()
    )
    recalls = list(
        RecallLog.objects.filter(namespace__in=ids, created_at__gte=since)
        .annotate(day=day)
        .values("day")
        .annotate(
            n=Count("id"),
            p50=Percentile(F("duration_ms"), 0.5),
            p95=Percentile(F("duration_ms"), 0.95),
            tokens=Sum("tokens"),
        )
        .order_by()
    )
    overview = Overview(
        days=days,
        new_memories=new_memories,
        status_totals=totals,
        turns=_per_day(turns, days),
        failed_jobs=_per_day(failed, days),
        recalls=_per_day(recalls, days),
        recall_p50=_latency(recalls, days, "p50"),
        recall_p95=_latency(recalls, days, "p95"),
        tokens=_per_day(recalls, days, "tokens"),
    )
    overview.retention_due, overview.expiring = _coming_due(namespaces)
    overview.chain = chain_status_latest()
    return overview


def _latency(rows: list[dict[str, Any]], days: list[date], name: str) -> list[float | None]:
    by_day = {row["day"]: row[name] for row in rows}
    return [round(by_day[d], 1) if by_day.get(d) is not None else None for d in days]


def _coming_due(namespaces: list[Namespace]) -> tuple[int, int]:
    """Active memories that retention archives within SOON_DAYS days (overdue included), and
    memories whose expiry falls within SOON_DAYS days."""
    now = timezone.now()
    due = 0
    for namespace in namespaces:
        if namespace.retention_days:
            cutoff = now - timedelta(days=namespace.retention_days) + timedelta(days=SOON_DAYS)
            due += Memory.objects.filter(
                namespace=namespace, status=Status.ACTIVE, created_at__lt=cutoff
            ).count()
    expiring = Memory.objects.filter(
        namespace__in=[n.pk for n in namespaces],
        expires_at__gt=now,
        expires_at__lte=now + timedelta(days=SOON_DAYS),
    ).count()
    return due, expiring
