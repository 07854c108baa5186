"""The explorer: filters in the address, cursor pages, search through the recall engine with
its score components (over the whole namespace, or one subject), and empty states."""

from __future__ import annotations

import re

import pytest

from apps.audit.actors import Actor
from apps.memories.models import Memory, Status
from apps.memories.services import NewMemory, memories_create_bulk, memory_create
from apps.namespaces.services import namespace_create
from tests.governance.conftest import Cast

ACTOR = Actor.system("tests")


def shown_ids(html: str) -> list[str]:
    return re.findall(r'name="ids" value="([0-9a-f-]{36})"', html)


FILTERS = [
    ("kind=episodic", lambda m: m.kind == "episodic"),
    ("status=pending_review", lambda m: m.status == Status.PENDING_REVIEW),
    ("status=superseded", lambda m: m.valid_to is not None),
    ("status=active", lambda m: m.status == Status.ACTIVE and m.valid_to is None),
    ("pii=pii%3Aemail", lambda m: "pii:email" in m.tags),
    ("source=conversation", lambda m: "session" in m.source),
    ("source=manual", lambda m: "session" not in m.source and "document" not in m.source),
    ("confidence_below=0.5", lambda m: m.confidence < 0.5),
    ("subject=u1&kind=semantic", lambda m: m.subject_id is not None and m.kind == "semantic"),
]


@pytest.mark.parametrize(("query", "matches"), FILTERS, ids=[f[0] for f in FILTERS])
def test_it_filters_by_the_query_string(cast: Cast, query: str, matches) -> None:  # type: ignore[no-untyped-def]
    html = cast.client("vera").get(f"/n/acme/memories/?{query}").content.decode()
    expected = {str(m.pk) for m in Memory.objects.filter(namespace=cast.acme) if matches(m)}
    assert expected, "the cast has rows for every filter"
    assert set(shown_ids(html)) == expected


def test_it_filters_by_time_range(cast: Cast) -> None:
    Memory.objects.filter(pk=cast.shared.pk).update(created_at="2020-01-02T10:00:00Z")
    client = cast.client("vera")
    html = client.get("/n/acme/memories/?until=2020-01-31").content.decode()
    assert shown_ids(html) == [str(cast.shared.pk)]
    html = client.get("/n/acme/memories/?since=2020-02-01").content.decode()
    assert str(cast.shared.pk) not in shown_ids(html)
    assert shown_ids(html)


def test_it_pages_by_cursor_with_the_position_shown(cast: Cast) -> None:
    memories_create_bulk(
        actor=ACTOR,
        namespace=cast.acme,
        items=[NewMemory(content=f"Note {i}.", subject_external_id="u2") for i in range(52)],
        embed=False,
    )
    total = Memory.objects.filter(namespace=cast.acme).count()
    client = cast.client("vera")
    first = client.get("/n/acme/memories/?size=25").content.decode()
    assert f"1–25 of {total}" in first
    after = re.search(r'href="\?size=25&amp;after=([^"]+)"', first)
    assert after is not None
    second = client.get(f"/n/acme/memories/?size=25&after={after.group(1)}").content.decode()
    assert f"26–50 of {total}" in second
    assert not set(shown_ids(first)) & set(shown_ids(second))
    before = re.search(r'href="\?size=25&amp;before=([^"]+)"', second)
    assert before is not None
    back = client.get(f"/n/acme/memories/?size=25&before={before.group(1)}").content.decode()
    assert shown_ids(back) == shown_ids(first)
    listed = []
    page, cursor = first, after.group(1)
    listed += shown_ids(page)
    while cursor:
        page = client.get(f"/n/acme/memories/?size=25&after={cursor}").content.decode()
        listed += shown_ids(page)
        found = re.search(r'href="\?size=25&amp;after=([^"]+)"', page)
        cursor = found.group(1) if found else ""
    newest_first = Memory.objects.filter(namespace=cast.acme).order_by("-created_at", "-id")
    assert listed == [str(pk) for pk in newest_first.values_list("pk", flat=True)]


def test_it_searches_the_whole_namespace_with_score_components(cast: Cast) -> None:
    memory_create(
        actor=ACTOR,
        namespace=cast.acme,
        item=NewMemory(
            subject_external_id="u2", content="The user drinks black tea every morning."
        ),
    )
    response = cast.client("vera").post("/n/acme/memories/", {"q": "tea"})
    html = response.content.decode()
    assert "jasmine green tea" in html
    assert "black tea every morning" in html
    for component in ("vector", "context", "keyword", "boosts", "recency", "importance"):
        assert f'aria-label="{component} ' in html
    assert "tea" not in response.request["QUERY_STRING"]


def test_a_query_about_nothing_stored_says_nothing_matched(cast: Cast) -> None:
    nonsense = " ".join(f"qzx{n}vbl" for n in range(200))  # 1,800 characters
    html = cast.client("vera").post("/n/acme/memories/", {"q": nonsense}).content.decode()
    assert "Nothing matched." in html
    assert "jasmine green tea" not in html
    sensible = cast.client("vera").post("/n/acme/memories/", {"q": "tea"}).content.decode()
    assert "jasmine green tea" in sensible  # the floor keeps what is about the query


def test_a_query_too_long_is_said_not_cut_short(cast: Cast) -> None:
    html = cast.client("vera").post("/n/acme/memories/", {"q": "tea " * 3000}).content.decode()
    assert 'id="search-error"' in html
    assert "2000" in html
    assert 'maxlength="2000"' not in html


def test_it_searches_one_subject_when_the_filter_names_it(cast: Cast) -> None:
    memory_create(
        actor=ACTOR,
        namespace=cast.acme,
        item=NewMemory(
            subject_external_id="u2", content="The user drinks black tea every morning."
        ),
    )
    html = cast.client("vera").post("/n/acme/memories/?subject=u2", {"q": "tea"}).content.decode()
    assert "black tea every morning" in html
    assert "jasmine green tea" not in html


def test_it_answers_htmx_with_the_results_fragment_only(cast: Cast) -> None:
    response = cast.client("vera").get("/n/acme/memories/?kind=semantic", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="results"')
    assert "<html" not in html


def test_it_says_how_to_write_the_first_memory_in_an_empty_namespace(cast: Cast) -> None:
    namespace_create(actor=ACTOR, slug="empty", name="Empty")
    from apps.namespaces.services import membership_set

    membership_set(actor=ACTOR, namespace=cast.acme.__class__.objects.get(slug="empty"),
                   user=cast.users["vera"], role="viewer")  # fmt: skip
    html = cast.client("vera").get("/n/empty/memories/").content.decode()
    assert "No memories in this namespace yet" in html
    assert "/api/v1/namespaces/empty/messages" in html


def test_it_hides_write_controls_from_a_viewer(cast: Cast) -> None:
    viewer = cast.client("vera").get(f"/n/acme/memories/{cast.fact.pk}/").content.decode()
    editor = cast.client("eddie").get(f"/n/acme/memories/{cast.fact.pk}/").content.decode()
    assert "/edit/" not in viewer
    assert "/edit/" in editor
    listing = cast.client("eddie").get("/n/acme/memories/").content.decode()
    assert 'value="delete"' not in listing  # bulk delete is the owner's
    assert 'value="delete"' in cast.client("olive").get("/n/acme/memories/").content.decode()


def test_it_dates_rows_in_the_viewers_time_zone(cast: Cast) -> None:
    Memory.objects.filter(pk=cast.shared.pk).update(created_at="2024-03-01T23:30:00Z")
    client = cast.client("vera")
    client.cookies["tz"] = "Asia/Tokyo"
    html = client.get("/n/acme/memories/?until=2024-03-31").content.decode()
    assert "2024-03-02 08:30 JST" in html
    client.cookies["tz"] = "Not/AZone"
    html = client.get("/n/acme/memories/?until=2024-03-31").content.decode()
    assert "2024-03-01 23:30 UTC" in html


def test_a_conversation_s_turns_are_numbered_from_one(cast: Cast) -> None:
    turn = Memory.objects.filter(
        namespace=cast.acme, kind="episodic", source__session__isnull=False
    ).first()
    assert turn is not None
    html = cast.client("vera").get(f"/n/acme/memories/{turn.pk}/").content.decode()
    numbers = re.findall(r'<li value="(\d+)"', html[html.index('<ol class="turns">') :])
    assert numbers[0] == "1"
    assert "0" not in numbers
