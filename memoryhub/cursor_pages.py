"""Cursor pages of a queryset, by keyset: the rows in the order of one column, the id breaking
ties, a page `after` the row a cursor names (the next) or `before` it (the previous). No
OFFSET: a page deep in a million rows costs what the first does, and rows written meanwhile
neither repeat nor vanish between pages.

A cursor is opaque to the reader (URL-safe base64) and carries the name of the order it was
made under, the row's sort key and id, and the number of the row the page it leads to starts
at: a page says which rows it shows ("26 to 50 of 60") without counting those before it.
Cursors travel in addresses people keep and edit: one that does not parse, or was made under
another order, is the first page, never an error.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.core.exceptions import ValidationError
from django.db.models import Field, Model, Q, QuerySet

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class PageOrder:
    """An order a list is paged in. `name` is written into its cursors, so one made under
    another order is not read as a position in this one. `field` is a column that is never
    null; the primary key's name orders by the id alone."""

    name: str
    field: str
    descending: bool


@dataclass(frozen=True)
class CursorPage(Generic[M]):
    rows: list[M]
    start: int  # the number of the first row (1-based); 0 on an empty page
    end: int
    next_cursor: str | None
    previous_cursor: str | None


@dataclass(frozen=True)
class _Mark:
    """Where a cursor points: the row's sort key and id, and the row number it leads to."""

    key: Any
    pk: Any
    start: int


def _columns(model: type[Model], order: PageOrder) -> tuple[Field[Any, Any], Field[Any, Any]]:
    """The sort key's field and the primary key's."""
    pk = model._meta.pk
    assert pk is not None  # every concrete model has one
    key = model._meta.get_field(order.field)
    assert isinstance(key, Field)
    return key, pk


def _encode(order: PageOrder, row: Model, start: int) -> str:
    key, pk = _columns(type(row), order)
    raw = "|".join((order.name, key.value_to_string(row), pk.value_to_string(row), str(start)))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode(cursor: str, model: type[Model], order: PageOrder) -> _Mark | None:
    """The position a cursor names; None for one that does not parse or was made under
    another order."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        made_under, rest = raw.split("|", 1)
        # Split from the right: the sort key's text is the one part that could hold a "|".
        shown, shown_pk, start = rest.rsplit("|", 2)
        if made_under != order.name:
            return None
        key_field, pk_field = _columns(model, order)
        return _Mark(key_field.to_python(shown), pk_field.to_python(shown_pk), max(int(start), 1))
    except (ValueError, UnicodeDecodeError, ValidationError):  # binascii.Error is a ValueError
        return None


def _ordered(
    rows: QuerySet[M], order: PageOrder, mark: _Mark | None, *, forward: bool
) -> QuerySet[M]:
    """The rows in the order (forward) or its reverse, from just past `mark` if given."""
    descending = order.descending == forward
    beyond, sign = ("lt", "-") if descending else ("gt", "")
    by_id = order.field in ("pk", _columns(rows.model, order)[1].name)
    keys = (f"{sign}pk",) if by_id else (f"{sign}{order.field}", f"{sign}pk")
    ordered = rows.order_by(*keys)
    if mark is None:
        return ordered
    if by_id:
        return ordered.filter(**{f"pk__{beyond}": mark.pk})
    past = Q(**{f"{order.field}__{beyond}": mark.key}) | Q(
        **{order.field: mark.key, f"pk__{beyond}": mark.pk}
    )
    return ordered.filter(past)


def cursor_page(
    rows: QuerySet[M], *, order: PageOrder, size: int, after: str = "", before: str = ""
) -> CursorPage[M]:
    """A page of `size` rows in `order`: the first, the one `after` a cursor (the next), or
    the one `before` it (the previous; `after` wins when both parse). A cursor that does not
    parse, or was made under another order, is the first page. One query; counting the rows
    is the caller's (whether to count, and how far, differs from list to list)."""
    mark = _decode(after, rows.model, order) if after else None
    going_back = False
    if mark is None and before:
        mark = _decode(before, rows.model, order)
        going_back = mark is not None
    chunk = list(_ordered(rows, order, mark, forward=not going_back)[: size + 1])
    more = len(chunk) > size
    chunk = chunk[:size]
    if going_back:
        chunk.reverse()
    page_start = mark.start if mark else 1
    start = page_start if chunk else 0
    end = start + len(chunk) - 1 if chunk else 0
    # Back from a page, the page we came from follows; forward, the row fetched past the
    # page says whether one does. The same, mirrored, for what precedes.
    has_next = more or going_back
    has_previous = page_start > 1 and (more or not going_back)
    return CursorPage(
        rows=chunk,
        start=start,
        end=end,
        next_cursor=_encode(order, chunk[-1], end + 1) if chunk and has_next else None,
        previous_cursor=(
            _encode(order, chunk[0], max(start - size, 1)) if chunk and has_previous else None
        ),
    )
