"""The review queue: what needs a person, by reason; an approved memory leaves it; the
htmx actions answer with the item's done state."""

from __future__ import annotations

import re
from functools import partial

from apps.audit.actors import Actor
from apps.governance.selectors import review_queue
from apps.memories.embeddings import set_provider
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memory_create
from tests.embedder import EnglishOnlyEmbedder
from tests.governance.conftest import Cast

ACTOR = Actor.system("tests")


def ids(items) -> set[str]:  # type: ignore[no-untyped-def]
    return {str(item.row.memory.pk) for item in items}


def test_it_gathers_each_reason_for_review(cast: Cast) -> None:
    twin = memory_create(
        actor=ACTOR,
        namespace=cast.acme,
        item=NewMemory(subject_external_id="u1", content="The user likes jasmine green tea."),
    )
    Memory.objects.filter(pk=cast.shared.pk).update(confidence=0.3)
    queue = review_queue(namespace=cast.acme)
    assert ids(queue["pending"]) == {str(cast.pending.pk)}
    assert ids(queue["low_confidence"]) == {str(cast.shared.pk)}
    assert ids(queue["pii"]) == {str(cast.pii.pk)}
    # Ended facts (the turns that ended with them follow their review, out of the queue).
    ended = Memory.objects.filter(namespace=cast.acme, valid_to__isnull=False).exclude(
        metadata__has_key="ended_with"
    )
    assert str(cast.old_fact.pk) in ids(queue["superseded"])  # and Hangzhou, by Shanghai
    assert ids(queue["superseded"]) == {str(m.pk) for m in ended}
    [pair] = queue["duplicate"]
    assert {str(pair.row.memory.pk), str(pair.other.memory.pk)} == {str(twin.pk), str(cast.fact.pk)}
    assert pair.similarity is not None
    assert pair.similarity >= 0.92


def test_it_takes_an_approved_memory_out_of_the_queue(cast: Cast) -> None:
    client = cast.client("eddie")
    client.post(f"/n/acme/memories/{cast.pii.pk}/action/", {"action": "approve"})
    assert not review_queue(namespace=cast.acme)["pii"]


def test_it_answers_an_htmx_action_with_the_done_item(cast: Cast) -> None:
    response = cast.client("eddie").post(
        f"/n/acme/memories/{cast.pending.pk}/action/",
        {"action": "approve", "from": "review"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<article class="queue-item card done"')
    assert 'data-done="approve"' in html


def test_it_offers_an_undo_after_a_reject(cast: Cast) -> None:
    response = cast.client("eddie").post(
        f"/n/acme/memories/{cast.pii.pk}/action/",
        {"action": "archive", "from": "review"},
        HTTP_HX_REQUEST="true",
    )
    assert 'value="restore"' in response.content.decode()


def test_it_lists_the_queue_with_its_keyboard_controls(cast: Cast) -> None:
    html = cast.client("eddie").get("/n/acme/review/").content.decode()
    assert html.count('class="queue-item card"') == 4  # pending, PII, two superseded
    assert 'data-key="a"' in html
    assert 'data-key="r"' in html
    assert 'data-key="e"' in html
    assert 'id="shortcuts"' in html


def test_it_shows_a_viewer_the_queue_without_actions(cast: Cast) -> None:
    html = cast.client("vera").get("/n/acme/review/").content.decode()
    assert "might be allergic to cats" in html
    assert 'data-key="a"' not in html


def test_it_never_offers_to_merge_facts_that_differ_in_a_value(cast: Cast) -> None:
    set_provider(EnglishOnlyEmbedder())
    create = partial(memory_create, actor=ACTOR, namespace=cast.acme)
    about = partial(NewMemory, subject_external_id="u9")
    city = create(item=about(content="用户住在深圳"))
    job = create(item=about(content="用户是程序员"))
    other_city = create(item=about(content="用户住在上海"))
    restated = create(item=about(content="用户住在深圳南山区"))
    pairs = [
        {str(item.row.memory.pk), str(item.other.memory.pk)}
        for item in review_queue(namespace=cast.acme)["duplicate"]
        if item.row.memory.subject_id == city.subject_id
    ]
    # All four are one point to the model: only the restatement with more detail is a pair.
    assert pairs == [{str(restated.pk), str(city.pk)}]
    assert {str(job.pk), str(other_city.pk)}.isdisjoint(set().union(*pairs))


def test_the_overview_and_the_queue_count_alike(cast: Cast, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    memory_create(
        actor=ACTOR,
        namespace=cast.acme,
        item=NewMemory(subject_external_id="u1", content="The user likes jasmine green tea."),
    )  # a near-duplicate
    monkeypatch.setattr("apps.governance.selectors.REVIEW_SECTION_LIMIT", 1)
    client = cast.client("eddie")
    queue = client.get("/n/acme/review/").content.decode()
    overview = client.get("/n/acme/").content.decode()
    total = re.search(r'id="queue-total" data-count="(\d+)"', queue)
    assert total is not None
    # pending, PII, two superseded and one pair of near-duplicates: five, on both pages
    assert total.group(1) == "5"
    assert re.search(r'<p class="figure">\s*5\s*</p>', overview), overview
    counts = re.findall(r'class="queue-count" data-count="(\d+)"', queue)
    assert sorted(counts) == ["1", "1", "1", "2"]  # the superseded: one shown of two
    assert "Only the newest is shown" in queue
