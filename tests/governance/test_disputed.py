"""Doubt goes to a person, not into the prompt: a turn that puts a current fact in question
without a new value makes it disputed. The fact leaves the current facts (recall, the
assembled prompt), keeps its history, waits in the review queue beside the turn that
disputed it, shows in the portal as not sure, and a reviewer confirms, corrects or ends it."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils.html import escape

from apps.audit.models import AuditEvent
from apps.memories.models import Memory, Status
from apps.memories.row_encryption import KeyCache, open_memory
from apps.pipeline.models import ConsolidationLog
from tests.conftest import Tenant
from tests.governance.conftest import Cast
from tests.pipeline.test_knowledge_consolidation import current, say
from tests.privacy.conftest import open_portal


def fact(text: str) -> Memory:
    keys = KeyCache()
    return next(m for m in Memory.objects.filter(kind="semantic") if open_memory(keys, m) == text)


@pytest.mark.django_db
def test_an_unresolved_change_disputes_the_fact_and_keeps_it_out_of_prompts(
    acme: Tenant,
) -> None:
    say(acme, "I'm allergic to peanuts. I take metformin for my diabetes.")
    say(acme, "My doctor took me off the metformin.")
    disputed = fact("The user takes metformin.")
    assert disputed.status == Status.DISPUTED
    assert disputed.valid_to is None  # not ended: a person decides
    assert current() == ["The user has diabetes.", "The user is allergic to peanuts."]
    turn = Memory.objects.get(kind="episodic", source__message=disputed.metadata["disputed_by"])
    assert open_memory(KeyCache(), turn) == "My doctor took me off the metformin."
    assert AuditEvent.objects.filter(action="memory.dispute", object_id=str(disputed.pk)).exists()
    assert ConsolidationLog.objects.filter(decision="dispute", related_id=disputed.pk).exists()

    recall = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "metformin medication"}, format="json"
    ).json()
    assert recall["results"]  # the turns are found
    assert str(disputed.pk) not in [hit["memory"]["id"] for hit in recall["results"]]
    context = acme.client.post(
        acme.url("context"), {"subject": "u1", "query": "what medication do I take?"}, format="json"
    ).json()
    prompt = "\n".join(message["content"] for message in context["messages"])
    assert "The user takes metformin." not in prompt


@pytest.mark.django_db
def test_a_denied_attribution_disputes_the_facts_of_the_previous_statement(acme: Tenant) -> None:
    say(acme, "I live in Leeds.")
    say(acme, "I'm allergic to shellfish.")
    say(acme, "That's my brother, not me.")
    assert fact("The user is allergic to shellfish.").status == Status.DISPUTED
    assert current() == ["The user lives in Leeds."]


@pytest.mark.django_db
def test_a_denied_attribution_in_the_same_batch_leaves_the_fact_waiting(acme: Tenant) -> None:
    # Both turns reach the pipeline together: the fact is never current, it waits for a person.
    say(
        acme,
        "I'm allergic to sesame, no sesame oil please.",
        "Sorry, it's my wife who's allergic to sesame, not me.",
    )
    assert fact("The user is allergic to sesame.").status == Status.PENDING_REVIEW
    assert current() == []
    log = ConsolidationLog.objects.get(
        decision="add", memory_id=fact("The user is allergic to sesame.").pk
    )
    assert log.reason.startswith("uncertain")


@pytest.mark.django_db
def test_a_chinese_turn_disputes_a_chinese_fact(acme: Tenant) -> None:
    say(acme, "我在吃二甲双胍。")
    (taken,) = Memory.objects.filter(kind="semantic")
    say(acme, "医生说二甲双胍不用再吃了。")
    taken.refresh_from_db()
    assert taken.status == Status.DISPUTED
    assert current() == []


@pytest.mark.django_db
def test_a_resolved_change_ends_the_fact_instead_of_disputing_it(acme: Tenant) -> None:
    say(acme, "I'm allergic to peanuts.")
    say(acme, "I'm no longer allergic to peanuts.")
    assert not Memory.objects.filter(status=Status.DISPUTED).exists()
    assert current() == []


@pytest.mark.django_db
def test_the_portal_says_it_is_not_sure(acme: Tenant) -> None:
    say(acme, "I take metformin.")
    say(acme, "My doctor took me off the metformin.")
    disputed = fact("The user takes metformin.")
    portal = open_portal(acme)
    listing = portal.client.get(portal.url("memories/?kind=semantic")).content.decode()
    assert "The user takes metformin." in listing
    assert "not sure this is still true" in listing
    page = portal.client.get(portal.url(f"memories/{disputed.pk}/")).content.decode()
    assert "not sure this is still true" in page
    assert "It is still true" in page
    found = portal.client.post(portal.url("memories/"), {"q": "metformin"}).content.decode()
    assert found.index("My doctor took me off the metformin.") < found.index(
        "The user takes metformin."
    )  # what is current before what is in doubt


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("action", "status", "ended"),
    [("confirm", Status.ACTIVE, False), ("end", Status.ACTIVE, True)],
)
def test_a_reviewer_confirms_or_ends_a_disputed_fact(
    cast: Cast, action: str, status: str, ended: bool
) -> None:
    memory = cast.fact
    Memory.objects.filter(pk=memory.pk).update(
        status=Status.DISPUTED,
        metadata={**memory.metadata, "disputed_by": str(cast.turn.source["message"])},
    )
    editor = cast.client("eddie")
    queue = editor.get("/n/acme/review/").content.decode()
    assert f'data-reason="disputed" data-memory="{memory.pk}"' in queue
    assert "Put in doubt by" in queue
    response = editor.post(
        f"/n/acme/memories/{memory.pk}/action/", {"action": action, "from": "review"}
    )
    assert response.status_code in (200, 302)
    memory.refresh_from_db()
    assert memory.status == status
    assert (memory.valid_to is not None) is ended
    assert memory.metadata.get("reviewed_at")
    event = "memory.end" if ended else "memory.approve"
    assert AuditEvent.objects.filter(action=event, object_id=str(memory.pk)).exists()
    queue = editor.get("/n/acme/review/").content.decode()
    assert f'data-reason="disputed" data-memory="{memory.pk}"' not in queue
    assert (
        cast.client("vera")
        .post(f"/n/acme/memories/{memory.pk}/action/", {"action": "end"})
        .status_code
        == 403
    )


@pytest.mark.django_db
def test_a_correction_settles_a_disputed_fact(cast: Cast) -> None:
    memory = cast.fact
    Memory.objects.filter(pk=memory.pk).update(status=Status.DISPUTED)
    editor: Client = cast.client("eddie")
    response = editor.post(
        f"/n/acme/memories/{memory.pk}/edit/?from=review",
        {
            "content": "The user likes oolong tea.",
            "reason": "corrected",
            "kind": "semantic",
            "tags": "",
            "importance": "0.5",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == "/n/acme/review/"
    memory.refresh_from_db()
    assert memory.status == Status.ACTIVE
    assert open_memory(KeyCache(), memory) == "The user likes oolong tea."


@pytest.mark.django_db
def test_the_person_says_a_disputed_fact_is_still_true(acme: Tenant) -> None:
    say(acme, "I take metformin.")
    say(acme, "My doctor took me off the metformin.")
    disputed = fact("The user takes metformin.")
    portal = open_portal(acme)
    response = portal.client.post(portal.url(f"memories/{disputed.pk}/confirm/"))
    assert response.status_code == 302
    disputed.refresh_from_db()
    assert disputed.status == Status.ACTIVE
    assert disputed.metadata.get("corrected_at")  # the person's own word: kept over turns
    assert AuditEvent.objects.filter(action="memory.update", object_id=str(disputed.pk)).exists()
    again = portal.client.post(portal.url(f"memories/{disputed.pk}/confirm/"), follow=True)
    assert "Only a memory in doubt can be confirmed." in again.content.decode()
    assert portal.client.get(portal.url(f"memories/{disputed.pk}/confirm/")).status_code == 405


@pytest.mark.django_db
def test_the_memory_page_shows_the_disputing_turn_and_settles_it(cast: Cast) -> None:
    memory = cast.fact
    message = str(cast.turn.source["message"])
    Memory.objects.filter(pk=memory.pk).update(
        status=Status.DISPUTED, metadata={**memory.metadata, "disputed_by": message}
    )
    page = cast.client("eddie").get(f"/n/acme/memories/{memory.pk}/").content.decode()
    assert 'id="disputed-by"' in page
    assert escape(open_memory(KeyCache(), cast.turn)) in page
    assert 'value="confirm"' in page
    assert 'value="end"' in page
    viewer = cast.client("vera").get(f"/n/acme/memories/{memory.pk}/").content.decode()
    assert 'id="disputed-by"' in viewer
    assert 'value="confirm"' not in viewer  # a viewer reads; an editor settles
