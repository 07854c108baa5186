"""The overview's rollups (OverviewSnapshot): read by each request, recomputed by aggregate
queries at most every SNAPSHOT_SECONDS, by the periodic refresh (`tasks.py`) or by the
first request that finds its scope's snapshot stale or missing."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from datetime import timedelta

from django.db import transaction
from django.utils import timezone, translation

from apps.governance.charts import overview_charts
from apps.governance.figures import overview_for
from apps.governance.models import OverviewSnapshot
from apps.namespaces.models import Namespace

SNAPSHOT_SECONDS = 60
FORGET_AFTER = timedelta(days=1)  # scopes nobody looked at for a day are not refreshed


def _scope(ids: list[int], time_zone: str, language: str) -> str:
    listed = ",".join(map(str, ids))
    if len(listed) > 150:
        listed = "sha256:" + hashlib.sha256(listed.encode()).hexdigest()
    return f"{listed}|{time_zone}|{language}"


def overview_snapshot(*, namespaces: list[Namespace], refresh: bool = False) -> OverviewSnapshot:
    """The overview of these namespaces in the active time zone and language: the stored
    snapshot while it is fresh, else computed now and stored (the next requests read it)."""
    ids = sorted(namespace.pk for namespace in namespaces)
    time_zone = timezone.get_current_timezone_name()
    language = translation.get_language() or "en"
    scope = _scope(ids, time_zone, language)
    now = timezone.now()
    snapshot = OverviewSnapshot.objects.filter(scope=scope).first()
    age = timedelta(seconds=SNAPSHOT_SECONDS)
    if snapshot is not None and now - snapshot.computed_at < age and not refresh:
        if now - snapshot.used_at > age:
            OverviewSnapshot.objects.filter(pk=snapshot.pk).update(used_at=now)
        return snapshot
    figures = overview_for(namespaces=namespaces)
    content = {
        "retention_due": figures.retention_due,
        "expiring": figures.expiring,
        "charts": [asdict(chart) for chart in overview_charts(figures)],
    }
    with transaction.atomic():
        snapshot, _ = OverviewSnapshot.objects.update_or_create(
            scope=scope,
            defaults={
                "namespace_ids": ids,
                "time_zone": time_zone,
                "language": language,
                "computed_at": now,
                "used_at": now,
                "content": content,
            },
        )
    return snapshot


def overview_snapshots_refresh() -> int:
    """Recompute every snapshot someone looked at in the last day (each in its own time zone
    and language); forget the others. Returns how many were recomputed."""
    now = timezone.now()
    OverviewSnapshot.objects.filter(used_at__lt=now - FORGET_AFTER).delete()
    done = 0
    for snapshot in OverviewSnapshot.objects.all():
        namespaces = list(Namespace.objects.filter(pk__in=snapshot.namespace_ids))
        if not namespaces:
            snapshot.delete()
            continue
        with timezone.override(snapshot.time_zone), translation.override(snapshot.language):
            overview_snapshot(namespaces=namespaces, refresh=True)
        done += 1
    return done
