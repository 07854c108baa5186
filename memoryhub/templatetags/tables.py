"""Tables whose columns come from data (a chart's figures): each cell with its column's
heading, which a phone shows as the cell's label when the table's rows stack.

    {% load tables %}
    {% for heading, cell in row|headed:chart.columns %}<td data-label="{{ heading }}">
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest

from django import template

register = template.Library()


@register.filter
def headed(row: Sequence[object], headings: Sequence[str]) -> list[tuple[str, object]]:
    """The row's cells, each with its column's heading; a cell beyond the headings gets none
    (""), and a row shorter than the headings keeps its own length."""
    return list(zip_longest(headings[: len(row)], row, fillvalue=""))
