"""Cursor pages by keyset: every row once, forward and back, in the order's sort key with the
id breaking ties; row numbers carried by the cursors; a cursor that does not parse, or was
made under another order, is the first page. Namespaces stand in for any table: they have a
float, a time and a free-text column to order by, and a default order of their own that a
page must not follow."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db.models import QuerySet
from django.utils import timezone

from apps.namespaces.models import Namespace
from memoryhub.cursor_pages import CursorPage, PageOrder, cursor_page

# Half-lives in ties: three rows share 2.0, two share 5.0.
HALF_LIVES = (5.0, 2.0, 9.0, 2.0, 5.0, 2.0, 1.0)
BY_HALF_LIFE = PageOrder("-half-life", "recency_half_life_days", descending=True)
BY_HALF_LIFE_ASCENDING = PageOrder("half-life", "recency_half_life_days", descending=False)
NEWEST_FIRST = PageOrder("-created", "created_at", descending=True)
BY_ID = PageOrder("id", "id", descending=False)


@pytest.fixture
def rows(db: None) -> QuerySet[Namespace]:
    """Seven namespaces; their half-lives in ties, and all created at the same moment."""
    for i, half_life in enumerate(HALF_LIVES):
        Namespace.objects.create(slug=f"n{i}", name=f"N{i}", recency_half_life_days=half_life)
    Namespace.objects.update(created_at=timezone.now() - timedelta(days=1))
    return Namespace.objects.all()


def ids(page: CursorPage[Namespace]) -> list[int]:
    return [row.pk for row in page.rows]


def walk_forward(rows: QuerySet[Namespace], order: PageOrder) -> list[CursorPage[Namespace]]:
    pages = [cursor_page(rows, order=order, size=2)]
    while pages[-1].next_cursor:
        assert len(pages) < len(HALF_LIVES), "the pages run in a circle"
        pages.append(cursor_page(rows, order=order, size=2, after=pages[-1].next_cursor))
    return pages


def encoded(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    ("order", "key"),
    [
        (BY_HALF_LIFE, lambda n: (-n.recency_half_life_days, -n.pk)),
        (BY_HALF_LIFE_ASCENDING, lambda n: (n.recency_half_life_days, n.pk)),
        (NEWEST_FIRST, lambda n: -n.pk),  # every row in one tie: the id orders them all
        (BY_ID, lambda n: n.pk),
    ],
)
def test_it_pages_every_row_once_in_the_order_with_ties_broken_by_id(
    rows: QuerySet[Namespace], order: PageOrder, key: Callable[[Namespace], Any]
) -> None:
    expected = [n.pk for n in sorted(rows, key=key)]
    pages = walk_forward(rows, order)
    assert [pk for page in pages for pk in ids(page)] == expected
    assert [(page.start, page.end) for page in pages] == [(1, 2), (3, 4), (5, 6), (7, 7)]


def test_it_pages_back_to_the_first_page_through_the_same_rows(
    rows: QuerySet[Namespace],
) -> None:
    forward = walk_forward(rows, BY_HALF_LIFE)
    back = [forward[-1]]
    while back[-1].previous_cursor:
        assert len(back) < len(HALF_LIVES), "the pages run in a circle"
        back.append(cursor_page(rows, order=BY_HALF_LIFE, size=2, before=back[-1].previous_cursor))
    assert [ids(page) for page in reversed(back)] == [ids(page) for page in forward]
    assert [(page.start, page.end) for page in reversed(back)] == [(1, 2), (3, 4), (5, 6), (7, 7)]
    # Each page reached going back, the first too, leads on to the page it was reached from.
    assert all(page.next_cursor for page in back[1:])


def test_the_first_and_last_pages_lead_no_further(rows: QuerySet[Namespace]) -> None:
    pages = walk_forward(rows, BY_HALF_LIFE)
    assert pages[0].previous_cursor is None
    assert pages[-1].next_cursor is None
    assert all(page.next_cursor for page in pages[:-1])
    assert all(page.previous_cursor for page in pages[1:])


def test_an_empty_list_is_an_empty_page(db: None) -> None:
    page = cursor_page(Namespace.objects.none(), order=BY_HALF_LIFE, size=2)
    assert (page.rows, page.start, page.end) == ([], 0, 0)
    assert (page.next_cursor, page.previous_cursor) == (None, None)


def test_a_sort_key_holding_the_cursors_separator_still_pages(rows: QuerySet[Namespace]) -> None:
    for i, namespace in enumerate(rows.order_by("pk")):
        Namespace.objects.filter(pk=namespace.pk).update(name=f"a|{i % 3}|b")
    by_name = PageOrder("name", "name", descending=False)
    expected = [n.pk for n in sorted(rows, key=lambda n: (n.name, n.pk))]
    assert [pk for page in walk_forward(rows, by_name) for pk in ids(page)] == expected


def test_a_cursor_made_under_another_order_is_the_first_page(rows: QuerySet[Namespace]) -> None:
    first = cursor_page(rows, order=BY_HALF_LIFE, size=2)
    assert first.next_cursor
    # The same column, the other way: the cursor's position means nothing here.
    other = cursor_page(rows, order=BY_HALF_LIFE_ASCENDING, size=2, after=first.next_cursor)
    assert ids(other) == ids(cursor_page(rows, order=BY_HALF_LIFE_ASCENDING, size=2))
    assert (other.start, other.previous_cursor) == (1, None)


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage!",
        "x",  # too short to be base64 of anything
        encoded(b"\xff\xfe-half-life|2.0|1|3"),  # not UTF-8
        encoded(b"-half-life|2.0|3"),  # a part missing
        encoded(b"-half-life|two|1|3"),  # a sort key that is no number
        encoded(b"-half-life||1|3"),  # no sort key
        encoded(b"-half-life|2.0|one|3"),  # an id that is no id
        encoded(b"-half-life|2.0|1|third"),  # a row number that is no number
    ],
)
def test_a_cursor_that_does_not_parse_is_the_first_page(
    rows: QuerySet[Namespace], cursor: str
) -> None:
    first = cursor_page(rows, order=BY_HALF_LIFE, size=2)
    for direction in ("after", "before"):
        page = cursor_page(rows, order=BY_HALF_LIFE, size=2, **{direction: cursor})
        assert ids(page) == ids(first), direction
        assert (page.start, page.end, page.previous_cursor) == (1, 2, None), direction


def test_a_cursor_written_by_hand_in_the_format_is_a_position(rows: QuerySet[Namespace]) -> None:
    """The controls above fail for their flaw alone: the same cursor, well formed, pages."""
    pk = rows.get(slug="n5").pk  # of the three with half-life 2.0, the one with the largest id
    page = cursor_page(
        rows, order=BY_HALF_LIFE, size=2, after=encoded(f"-half-life|2.0|{pk}|3".encode())
    )
    expected = [n.pk for n in sorted(rows, key=lambda n: (-n.recency_half_life_days, -n.pk))]
    assert ids(page) == expected[expected.index(pk) + 1 :][:2]
    assert (page.start, page.end) == (3, 4)


def test_a_row_number_below_one_is_read_as_one(rows: QuerySet[Namespace]) -> None:
    pk = max(rows.values_list("pk", flat=True))
    page = cursor_page(rows, order=BY_ID, size=2, before=encoded(f"id|{pk}|{pk}|-5".encode()))
    assert (page.start, page.previous_cursor) == (1, None)


def test_a_page_with_nothing_before_it_leads_back_nowhere(rows: QuerySet[Namespace]) -> None:
    """Rows deleted since a cursor was made leave its row numbers behind; the link back
    goes by the rows there are."""
    first, second, third = walk_forward(rows, BY_HALF_LIFE)[:3]
    Namespace.objects.filter(pk__in=ids(first)).delete()
    back = cursor_page(rows, order=BY_HALF_LIFE, size=2, before=third.previous_cursor or "")
    assert ids(back) == ids(second)
    assert back.previous_cursor is None
    assert back.next_cursor is not None
