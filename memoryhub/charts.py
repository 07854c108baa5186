"""Charts of the dashboard: pygal SVG rendered on the server, shown as images (an SVG image
runs no script and needs nothing from the network), each with its figures as a table too.
"""

from __future__ import annotations

import base64
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pygal
from pygal.style import Style

# A value more than this many times the typical one (the lower median of all values shown) is
# drawn at the top edge and marked "off the scale": one slow request cannot flatten the rest.
OUTLIER_FACTOR = 5.0
HEADROOM = 1.1  # above the largest value on the scale

COLOURS = ("#2f5fa7", "#27ae60", "#8e44ad", "#d68910", "#c0392b", "#16a085", "#7b8794")
COLOURING: dict[str, object] = {
    "background": "#ffffff",
    "plot_background": "#ffffff",
    "foreground": "#1f2933",
    "foreground_strong": "#1f2933",
    "foreground_subtle": "#616e7c",
    "colors": COLOURS,
    "font_family": "system-ui, -apple-system, 'Segoe UI', sans-serif",
}
STYLE = Style(
    **COLOURING,
    label_font_size=14,
    major_label_font_size=14,
    legend_font_size=15,
    title_font_size=18,
)
# A phone shows a chart about 330 px wide: drawn 420 px wide with larger text, its labels
# are read at 13 px or more (the wide one's would shrink to 6 px).
NARROW: dict[str, object] = {
    "width": 420,
    "height": 440,
    "style": Style(
        **COLOURING,
        label_font_size=17,
        major_label_font_size=17,
        legend_font_size=17,
        title_font_size=20,
        value_font_size=15,
        tooltip_font_size=15,
    ),
    "legend_at_bottom": True,
    "legend_at_bottom_columns": 2,
    "legend_box_size": 16,
}
NARROW_MEDIA = "(max-width: 40rem)"  # the stylesheet's phone width


@dataclass(frozen=True)
class Chart:
    """A chart as an image (data: URI), its text alternative, and its figures."""

    title: str
    image: str
    alt: str
    columns: list[str]  # the table's column headings (the first is the x axis)
    rows: list[list[str]]
    narrow_image: str = ""  # the same chart drawn for a phone's width (NARROW)
    narrow_media: str = NARROW_MEDIA


def chart_config(title: str, x_title: str, y_title: str) -> dict[str, object]:
    return {
        "title": title,
        "x_title": x_title,
        "y_title": y_title,
        "style": STYLE,
        "width": 760,
        "height": 320,
        "explicit_size": True,
        "disable_xml_declaration": True,
        "js": [],  # no script: shown as an image, and nothing fetched
        # At the bottom, pygal 3.1 draws the legend below the picture's edge: on the right.
        "legend_at_bottom": False,
        "legend_box_size": 14,
        "x_label_rotation": 0,
        "show_minor_x_labels": False,
        "x_labels_major_every": 7,
        "truncate_legend": -1,
        "truncate_label": -1,
        "print_values": False,
        "no_data_text": "",
        "margin": 12,
    }


def chart_image(chart: pygal.graph.graph.Graph) -> str:
    svg = chart.render(is_unicode=True)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def chart_images(chart: pygal.graph.graph.Graph, **narrow: object) -> tuple[str, str]:
    """The chart drawn for a wide screen, then again for a phone's (NARROW, and `narrow`'s
    settings: a rotation for long x labels)."""
    wide = chart_image(chart)
    for name, value in {**NARROW, **narrow}.items():
        setattr(chart, name, value)
    return wide, chart_image(chart)


def lines(
    *,
    title: str,
    x_title: str,
    y_title: str,
    labels: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    alt: str,
    y_range: tuple[float, float] | None = None,
) -> Chart:
    """Named series over labelled points (runs, days): a line each, dots on the values."""
    config = chart_config(title, x_title, y_title)
    config.update(x_labels_major_every=None, show_minor_x_labels=True, x_label_rotation=20)
    if y_range is not None:
        config["range"] = y_range
    chart = pygal.Line(**config)
    chart.x_labels = list(labels)
    chart.show_legend = len(series) > 1
    for name, values in series.items():
        chart.add(name, list(values))
    rows = [
        [label, *("—" if values[i] is None else f"{values[i]:.3f}" for values in series.values())]
        for i, label in enumerate(labels)
    ]
    wide, narrow = chart_images(chart, x_label_rotation=35)
    return Chart(title, wide, alt, [x_title, *series], rows, narrow)


def outlier_scale(
    values: Iterable[float | None], *, factor: float = OUTLIER_FACTOR
) -> float | None:
    """The top of a y axis that outliers cannot set, or None when no value is an outlier (the
    axis then fits every value). An outlier is a value over `factor` times the lower median
    of the values: with two days of figures, one normal and one slow, the normal one sets
    the scale. The top is the largest other value, with some headroom."""
    shown = sorted(value for value in values if value is not None)
    if not shown or shown[0] < 0:
        return None
    limit = factor * statistics.median_low(shown)
    if shown[-1] <= limit or limit <= 0:
        return None
    within = max(value for value in shown if value <= limit)
    return float(math.ceil(within * HEADROOM))


def clipped(values: Sequence[float | None], top: float) -> list[float | None]:
    """The values as drawn under a scale that ends at `top`: larger ones at the top edge."""
    return [None if value is None else min(value, top) for value in values]


def off_scale(series: Iterable[Sequence[float | None]], top: float) -> list[bool]:
    """Per point (day) of series of equal length: whether any series is above `top` there."""
    return [
        any(value is not None and value > top for value in point)
        for point in zip(*series, strict=True)
    ]
