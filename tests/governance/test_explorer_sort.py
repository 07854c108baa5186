"""The explorer's order: by created, updated or importance, named in the address; cursor
pages that stay right under each order (ties broken by id); relevance only for a search; an
unknown order is said, and the list shown newest first."""

from __future__ import annotations

import re
from datetime import timedelta

from django.utils import timezone

from apps.audit.actors import Actor
from apps.governance import selectors
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memories_create_bulk
from tests.governance.conftest import Cast

ACTOR = Actor.system("tests")


def shown_ids(html: str) -> list[str]:
    return re.findall(r'name="ids" value="([0-9a-f-]{36})"', html)


def with_notes(cast: Cast) -> list[Memory]:
    """Seven notes of subject u2 with importance in ties (0.2, 0.5, 0.9) and updated times
    in the reverse order of their creation."""
    notes = memories_create_bulk(
        actor=ACTOR,
        namespace=cast.acme,
        items=[NewMemory(content=f"Note {i}.", subject_external_id="u2") for i in range(7)],
        embed=False,
    )
    now = timezone.now()
    for i, note in enumerate(notes):
        Memory.objects.filter(pk=note.pk).update(
            importance=(0.2, 0.5, 0.9)[i % 3], updated_at=now - timedelta(minutes=i)
        )
    return list(Memory.objects.filter(pk__in=[note.pk for note in notes]))


def test_it_pages_every_order_by_cursor_without_losing_or_repeating_a_row(cast: Cast) -> None:
    with_notes(cast)
    memories = selectors.namespace_memories(cast.acme).filter(subject__external_id="u2")
    for sort, field, descending in (
        ("importance", "importance", False),
        ("-importance", "importance", True),
        ("-updated", "updated_at", True),
        ("created", "created_at", False),
    ):
        every = sorted(memories, key=lambda m: (getattr(m, field), m.pk), reverse=descending)
        expected = [m.pk for m in every]
        pages, cursor = [], ""
        while True:
            page = selectors.explorer_page(memories=memories, size=3, after=cursor, sort=sort)
            pages.append([row.memory.pk for row in page.rows])
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert [pk for rows in pages for pk in rows] == expected, sort
        assert [len(rows) for rows in pages] == [3, 3, 1]
        back = selectors.explorer_page(
            memories=memories, size=3, before=page.previous_cursor or "", sort=sort
        )
        assert [row.memory.pk for row in back.rows] == pages[1], sort
        assert (back.start, back.end) == (4, 6)


def test_a_cursor_made_under_another_order_is_the_first_page(cast: Cast) -> None:
    with_notes(cast)
    memories = selectors.namespace_memories(cast.acme).filter(subject__external_id="u2")
    first = selectors.explorer_page(memories=memories, size=3, sort="-updated")
    other = selectors.explorer_page(
        memories=memories, size=3, after=first.next_cursor or "", sort="-created"
    )
    assert other.start == 1


def test_it_orders_the_list_by_the_address_with_the_column_marked(cast: Cast) -> None:
    notes = with_notes(cast)
    html = cast.client("vera").get("/n/acme/memories/?subject=u2&sort=importance").content
    page = html.decode()
    expected = sorted(notes, key=lambda m: (m.importance, m.pk))
    assert shown_ids(page) == [str(m.pk) for m in expected]
    assert re.search(r'<th scope="col" aria-sort="ascending"><a class="sort" href="\?', page)
    # The column's link flips the order; another column's orders by it, descending first.
    assert 'href="?subject=u2&amp;sort=-importance">Importance' in page
    assert 'href="?subject=u2&amp;sort=-updated">Updated' in page


def test_the_default_order_is_newest_first(cast: Cast) -> None:
    html = cast.client("vera").get("/n/acme/memories/").content.decode()
    newest = Memory.objects.filter(namespace=cast.acme).order_by("-created_at", "-id")
    assert shown_ids(html) == [str(m.pk) for m in newest]
    assert 'aria-sort="descending"><a class="sort" href="?sort=created">Created' in html


def test_an_unknown_order_is_said_and_the_list_shown_newest_first(cast: Cast) -> None:
    client = cast.client("vera")
    newest = [str(m.pk) for m in Memory.objects.filter(namespace=cast.acme)]
    for bad in ("bogus", "-relevance", "-id"):
        response = client.get(f"/n/acme/memories/?sort={bad}")
        assert response.status_code == 200
        html = response.content.decode()
        assert shown_ids(html) == newest, bad
        assert re.search(r'<p class="error" role="alert">[^<]+</p>', html), bad
        assert '<details class="fold" data-open-wide open>' in html  # the error is in sight


def test_a_search_orders_its_hits_by_relevance_or_as_chosen(cast: Cast) -> None:
    client = cast.client("vera")
    by_relevance = client.post("/n/acme/memories/", {"q": "tea"}).content.decode()
    assert 'aria-sort="descending">Score' in by_relevance
    hits = re.findall(r'href="/n/acme/memories/([0-9a-f-]{36})/"', by_relevance)
    assert len(hits) >= 2
    oldest_first = client.post("/n/acme/memories/", {"q": "tea", "sort": "created"}).content
    expected = Memory.objects.filter(pk__in=hits).order_by("created_at", "id")
    shown = re.findall(r'href="/n/acme/memories/([0-9a-f-]{36})/"', oldest_first.decode())
    assert shown == [str(m.pk) for m in expected]
