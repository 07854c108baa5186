"""Every action of the governance pages goes through a service, does what it says, and writes
exactly one audit event (content-free) in its transaction; the chain still verifies."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from apps.audit.models import AuditEvent
from apps.memories.models import Memory, MemoryVersion, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from tests.audit_events import one_event
from tests.governance.conftest import Cast


def content(memory: Memory) -> str:
    memory.refresh_from_db()
    return open_memory(KeyCache(), memory)


def test_it_edits_a_memory_into_a_new_version_with_its_reason(cast: Cast) -> None:
    client = cast.client("eddie")
    with one_event("memory.update") as events:
        response = client.post(
            f"/n/acme/memories/{cast.fact.pk}/edit/",
            {"content": "The user likes oolong tea.", "kind": "semantic",
             "tags": "drinks, tea", "importance": "0.9", "reason": "corrected by support"},
        )  # fmt: skip
    assert response.status_code == 302
    assert content(cast.fact) == "The user likes oolong tea."
    assert cast.fact.tags == ["drinks", "tea"]
    assert cast.fact.importance == 0.9
    newest = MemoryVersion.objects.filter(memory=cast.fact).order_by("-version").first()
    assert newest is not None
    assert newest.reason == "corrected by support"
    assert newest.changed_by == "user:eddie"
    assert "oolong" not in str(events[0].details)  # content-free


def test_it_refuses_an_edit_without_a_reason_and_changes_nothing(cast: Cast) -> None:
    before = AuditEvent.objects.count()
    response = cast.client("eddie").post(
        f"/n/acme/memories/{cast.fact.pk}/edit/",
        {"content": "Changed.", "kind": "semantic", "tags": "", "importance": "0.5", "reason": ""},
    )
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert content(cast.fact) == "The user likes jasmine green tea."
    assert AuditEvent.objects.count() == before


def test_it_shows_the_edit_as_a_word_diff_on_the_detail_page(cast: Cast) -> None:
    client = cast.client("eddie")
    client.post(
        f"/n/acme/memories/{cast.fact.pk}/edit/",
        {"content": "The user likes jasmine white tea.", "kind": "semantic", "tags": "",
         "importance": "0.5", "reason": "white, not green"},
    )  # fmt: skip
    html = client.get(f"/n/acme/memories/{cast.fact.pk}/").content.decode()
    assert "<del>green</del><ins>white</ins>" in html
    assert "white, not green" in html


ACTIONS: list[tuple[str, str, Callable[[Cast], Memory], Callable[[Memory], bool]]] = [
    ("approve", "memory.approve", lambda c: c.pending,
     lambda m: m.status == Status.ACTIVE and "reviewed_at" in m.metadata and m.confidence == 1.0),
    ("archive", "memory.archive", lambda c: c.fact, lambda m: m.status == Status.ARCHIVED),
    ("rollback", "memory.supersede_rollback", lambda c: c.old_fact,
     lambda m: m.valid_to is None and m.superseded_by_id is None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("action", "event", "target", "done"), ACTIONS, ids=[a[0] for a in ACTIONS]
)
def test_it_acts_on_one_memory(
    cast: Cast,
    action: str,
    event: str,
    target: Callable[[Cast], Memory],
    done: Callable[[Memory], bool],
) -> None:
    memory = target(cast)
    with one_event(event):
        response = cast.client("eddie").post(
            f"/n/acme/memories/{memory.pk}/action/", {"action": action}
        )
    assert response.status_code == 302
    memory.refresh_from_db()
    assert done(memory)


def test_it_archives_the_successor_when_a_supersede_is_rolled_back(cast: Cast) -> None:
    cast.client("eddie").post(
        f"/n/acme/memories/{cast.old_fact.pk}/action/", {"action": "rollback"}
    )
    cast.fact.refresh_from_db()
    assert cast.fact.status == Status.ARCHIVED


def test_it_restores_an_archived_memory(cast: Cast) -> None:
    client = cast.client("eddie")
    client.post(f"/n/acme/memories/{cast.fact.pk}/action/", {"action": "archive"})
    with one_event("memory.restore"):
        client.post(f"/n/acme/memories/{cast.fact.pk}/action/", {"action": "restore"})
    cast.fact.refresh_from_db()
    assert cast.fact.status == Status.ACTIVE


def test_it_deletes_one_memory_after_a_confirmation_that_names_it(cast: Cast) -> None:
    client = cast.client("eddie")
    confirm = client.get(f"/n/acme/memories/{cast.fact.pk}/delete/").content.decode()
    assert str(cast.fact.pk) in confirm
    assert "jasmine green tea" in confirm
    with one_event("memory.delete"):
        client.post(f"/n/acme/memories/{cast.fact.pk}/delete/")
    assert not Memory.objects.filter(pk=cast.fact.pk).exists()
    assert not MemoryVersion.objects.filter(memory_id=cast.fact.pk).exists()


def test_it_merges_a_duplicate_pair_keeping_one(cast: Cast) -> None:
    with one_event("memory.merge"):
        cast.client("eddie").post(
            "/n/acme/review/merge/", {"keep": str(cast.fact.pk), "other": str(cast.pii.pk)}
        )
    cast.pii.refresh_from_db()
    cast.fact.refresh_from_db()
    assert cast.pii.valid_to is not None
    assert cast.pii.superseded_by_id == cast.fact.pk
    assert str(cast.pii.pk) in cast.fact.metadata["supersedes"]


def test_it_reviews_a_bulk_archive_then_archives_the_chosen_rows(cast: Cast) -> None:
    client = cast.client("eddie")
    chosen = {"action": "archive", "ids": [str(cast.fact.pk), str(cast.pii.pk)]}
    review = client.post("/n/acme/memories/bulk/", chosen)
    assert review.status_code == 200
    assert "Archive: 2 memories" in review.content.decode()
    assert Memory.objects.get(pk=cast.fact.pk).status == Status.ACTIVE  # nothing yet
    with one_event("memory.bulk_archive") as events:
        client.post("/n/acme/memories/bulk/", {**chosen, "confirm": "1", "reason": "spam"})
    assert events[0].details["count"] == 2
    assert events[0].details["reason"] == "spam"
    assert set(Memory.objects.filter(status=Status.ARCHIVED).values_list("pk", flat=True)) == {
        cast.fact.pk,
        cast.pii.pk,
    }


def test_it_tags_every_row_matching_the_filter(cast: Cast) -> None:
    client = cast.client("eddie")
    with one_event("memory.bulk_tag"):
        client.post(
            "/n/acme/memories/bulk/?kind=episodic",
            {"action": "tag", "select_all": "1", "confirm": "1", "reason": "r", "tag": "turns"},
        )
    episodic = Memory.objects.filter(namespace=cast.acme, kind="episodic")
    assert episodic.count() > 0
    assert all("turns" in memory.tags for memory in episodic)
    assert not Memory.objects.filter(namespace=cast.acme, kind="semantic", tags__contains=["turns"])


def test_it_bulk_deletes_with_the_recall_log_rows_that_name_them(cast: Cast) -> None:
    from apps.recall.models import RecallLog

    RecallLog.objects.create(namespace=cast.acme, actor_type="api_key", memory_ids=[cast.fact.pk])
    both = RecallLog.objects.create(
        namespace=cast.acme, actor_type="api_key", memory_ids=[cast.fact.pk, cast.pii.pk]
    )
    with one_event("memory.bulk_delete") as events:
        cast.client("olive").post(
            "/n/acme/memories/bulk/",
            {"action": "delete", "ids": [str(cast.fact.pk)], "confirm": "1", "reason": "r"},
        )
    assert events[0].details["memories"] == 1
    assert events[0].details["recall_log_rows"] == 3  # these two and the cast's own recall
    assert not Memory.objects.filter(pk=cast.fact.pk).exists()
    assert list(RecallLog.objects.filter(namespace=cast.acme).values_list("id", flat=True)) == [
        both.pk
    ]
    both.refresh_from_db()
    assert both.memory_ids == [cast.pii.pk]


def test_it_pauses_and_resumes_a_subjects_capture(cast: Cast) -> None:
    client = cast.client("eddie")
    with one_event("subject.pause"):
        client.post(f"/n/acme/subjects/{cast.subject_id}/pause/", {"paused": "1"})
    assert Subject.objects.get(pk=cast.subject_id).paused
    with one_event("subject.resume"):
        client.post(f"/n/acme/subjects/{cast.subject_id}/pause/", {"paused": "0"})
    assert not Subject.objects.get(pk=cast.subject_id).paused


def test_it_exports_a_subject_as_a_json_download(cast: Cast) -> None:
    with one_event("subject.export"):
        response = cast.client("eddie").get(f"/n/acme/subjects/{cast.subject_id}/export/")
    assert response["Content-Disposition"].startswith("attachment;")
    document = response.json()
    texts = [memory["content"] for memory in document["memories"]]
    assert "The user likes jasmine green tea." in texts
    assert document["sessions"]


def test_it_erases_a_subject_only_with_its_id_typed(cast: Cast) -> None:
    client = cast.client("olive")
    wrong = client.post(f"/n/acme/subjects/{cast.subject_id}/erase/", {"confirmation": "u2"})
    assert "That is not this subject" in wrong.content.decode()
    assert Subject.objects.filter(pk=cast.subject_id).exists()
    with one_event("subject.erase") as events:
        receipt = client.post(f"/n/acme/subjects/{cast.subject_id}/erase/", {"confirmation": "u1"})
    assert not Subject.objects.filter(pk=cast.subject_id).exists()
    assert events[0].details["receipt_hash"] in receipt.content.decode()


def test_it_records_each_read_of_decrypted_content_without_the_content(cast: Cast) -> None:
    client: Client = cast.client("vera")
    with one_event("dashboard.read.memory") as events:
        client.get(f"/n/acme/memories/{cast.fact.pk}/")
    assert events[0].object_id == str(cast.fact.pk)
    assert events[0].actor_name == "vera"
    with one_event("dashboard.read.list") as events:
        client.get("/n/acme/memories/")
    assert str(cast.fact.pk) in events[0].details["memory_ids"]
    assert "jasmine" not in str(events[0].details)
    with one_event("dashboard.read.subject") as events:
        client.get(f"/n/acme/subjects/{cast.subject_id}/")
    assert str(events[0].subject_id) == cast.subject_id


def test_it_sends_no_store_on_pages_with_decrypted_content(cast: Cast) -> None:
    response = cast.client("vera").get(f"/n/acme/memories/{cast.fact.pk}/")
    assert "no-store" in response["Cache-Control"]


def test_an_editor_marks_a_recall_relevant_with_one_click(cast) -> None:
    from apps.recall.models import RecallFeedback

    client = cast.client("eddie")
    url = f"/n/acme/memories/{cast.fact.pk}/feedback/"
    response = client.post(url, {"recall": str(cast.recall.pk), "relevant": "0"})
    assert response.status_code == 302
    (judged,) = RecallFeedback.objects.all()
    assert (judged.relevant, judged.actor_type) == (False, "user")
    page = client.get(f"/n/acme/memories/{cast.fact.pk}/").content.decode()
    assert "not relevant" in page
    client.post(url, {"recall": str(cast.recall.pk), "relevant": "1"})
    assert RecallFeedback.objects.get().relevant is True
    # A recall that did not serve this memory: said so, nothing stored.
    client.post(
        f"/n/acme/memories/{cast.pending.pk}/feedback/",
        {"recall": str(cast.recall.pk), "relevant": "1"},
    )
    assert RecallFeedback.objects.count() == 1
