"""The overview's rollups: each scope's figures and charts, computed by aggregate queries at
most once a minute (by the periodic refresh, or by the first request that finds them stale),
so a request reads one row instead of scanning memories, turns and the recall log."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models


class OverviewSnapshot(models.Model):
    """The overview of a set of namespaces, in a time zone and a language (its days and its
    chart labels depend on both): counts and rendered charts, no content."""

    scope = models.CharField(max_length=255, unique=True)
    namespace_ids = ArrayField(models.BigIntegerField())
    time_zone = models.CharField(max_length=64)
    language = models.CharField(max_length=16)
    computed_at = models.DateTimeField()
    used_at = models.DateTimeField()
    content = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"overview {self.scope} @ {self.computed_at:%H:%M:%S}"
