"""The overview's latency chart keeps its scale when one request is very slow: the axis ends
near the other days' figures and the slow day is drawn at the top edge, marked off the
scale; the table keeps every figure as it is."""

from __future__ import annotations

import base64
import re
from datetime import date, timedelta

from apps.governance.charts import latency_per_day
from memoryhub.charts import outlier_scale

DAYS = [date(2026, 11, 5) + timedelta(days=i) for i in range(30)]
P50 = [20.0 + i % 7 for i in range(30)]  # 20-26 ms
P95 = [40.0 + 2 * (i % 7) for i in range(30)]  # 40-52 ms


def heights(image: str) -> dict[int, list[float]]:
    """The y coordinate of each series' dots in the chart's SVG (smaller is higher)."""
    svg = base64.b64decode(image.split(",", 1)[1]).decode()
    series = re.finditer(r'<g class="series serie-(\d+)[^"]*">(.*?)</g>\s*</g>', svg, re.S)
    return {
        int(found.group(1)): [
            float(y) for y in re.findall(r'<circle[^>]*cy="([\d.]+)"', found.group(2))
        ]
        for found in series
    }


def test_it_leaves_the_scale_to_the_figures_when_none_is_an_outlier() -> None:
    assert outlier_scale([*P50, *P95]) is None
    assert outlier_scale([None, None]) is None
    assert outlier_scale([]) is None


def test_it_ends_the_scale_below_one_outlier() -> None:
    assert outlier_scale([*P50, *P95, 77_000.0]) == 58.0  # 52 ms and some headroom
    assert outlier_scale([25.0, 40.0, 77_000.0, 77_000.0]) == 44.0  # a normal day and a slow one


def test_one_slow_request_does_not_flatten_the_other_days() -> None:
    p95 = [*P95]
    p95[10] = 77_000.0  # the first request after a start, waiting for a model to load
    chart = latency_per_day(DAYS, P50, p95)

    drawn = heights(chart.image)
    normal = drawn[1][:10] + drawn[1][11:]
    assert max(normal) - min(normal) > 20  # the 40-52 ms days still rise and fall visibly
    assert drawn[1][10] == min(drawn[1])  # the slow day at the top edge
    assert drawn[2] == [drawn[1][10]]  # and marked there, once
    assert "1 day is off the scale (above 58 ms)" in chart.alt
    assert chart.rows[10] == [DAYS[10].isoformat(), "23.0", "77000.0"]


def test_without_an_outlier_nothing_is_marked_off_the_scale() -> None:
    chart = latency_per_day(DAYS, P50, P95)
    assert sorted(heights(chart.image)) == [0, 1]
    assert "off the scale" not in chart.alt
