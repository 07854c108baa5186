"""The demo namespace as `demo_load` leaves it: loaded once for the module (in a transaction
rolled back at its end, so nothing is committed), each test in a savepoint of its own."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.demo.services import (
    DemoReport,
    demo_actor,
    demo_counts,
    demo_eval,
    demo_load,
    demo_remove,
    demo_status,
    demo_subject_ids,
    read_data,
    read_eval,
)
from apps.memories.models import DataKey, Kind, Memory, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.selectors import procedural_memories
from apps.memories.services import subject_get_or_create
from apps.namespaces.models import Namespace
from apps.pipeline.models import Message, Session
from apps.recall.models import RecallLog
from memoryhub.exceptions import ApplicationError

DATA = read_data()


def memories(external_id: str | None, kind: str = Kind.SEMANTIC) -> dict[str, Memory]:
    """The demo's memories of a subject (None: the shared ones) by their text."""
    keys = KeyCache()
    rows = Memory.objects.filter(namespace__slug="demo", kind=kind)
    rows = (
        rows.filter(subject__isnull=True)
        if external_id is None
        else rows.filter(subject__external_id=external_id)
    )
    return {open_memory(keys, memory): memory for memory in rows}


def current(memory: Memory) -> bool:
    return memory.valid_to is None and memory.status == Status.ACTIVE


def one(found: dict[str, Memory], phrase: str) -> Memory:
    matches = [memory for text, memory in found.items() if phrase.lower() in text.lower()]
    assert len(matches) == 1, (phrase, list(found))
    return matches[0]


def test_it_loads_the_subjects_with_their_sessions_and_turns(
    loaded: DemoReport, demo: Namespace
) -> None:
    sessions = [s for subject in DATA["subjects"] for s in subject["sessions"]]
    turns = [turn for session in sessions for turn in session["turns"]]
    assert loaded.done
    assert sorted(Subject.objects.filter(namespace=demo).values_list("external_id", flat=True)) == [
        f"demo-user-{n}" for n in range(1, 6)
    ]
    assert Session.objects.filter(namespace=demo).count() == len(sessions) == 14
    assert Message.objects.filter(session__namespace=demo).count() == len(turns)
    for subject in Subject.objects.filter(namespace=demo):
        assert 2 <= Session.objects.filter(subject=subject).count() <= 4
    # Every user turn is remembered as an episode (assistant turns are not), plus the one
    # episode the app wrote itself.
    user_turns = sum(1 for role, _ in turns if role == "user")
    episodic = Memory.objects.filter(namespace=demo, kind=Kind.EPISODIC).count()
    assert episodic == user_turns + 1
    assert loaded.counts == demo_counts(namespace=demo)


def test_it_keeps_the_new_city_current_and_ends_the_old_one(demo: Namespace) -> None:
    facts = memories("demo-user-1")
    shanghai, hangzhou = one(facts, "lives in Shanghai"), one(facts, "lives in Hangzhou")
    assert current(shanghai)
    assert not current(hangzhou)
    assert hangzhou.superseded_by_id == shanghai.id
    chinese = memories("demo-user-3")
    assert current(one(chinese, "住在深圳"))
    assert not current(one(chinese, "住在成都"))


def test_it_keeps_the_corrected_allergy_and_ends_the_wrong_one(demo: Namespace) -> None:
    facts = memories("demo-user-1")
    assert current(one(facts, "allergic to shellfish"))
    assert not current(one(facts, "allergic to peanuts"))
    currently = [text for text, memory in facts.items() if current(memory)]
    assert not any("peanut" in text for text in currently)


def test_it_follows_the_new_jobs_and_the_diet_change(demo: Namespace) -> None:
    tom = memories("demo-user-2")
    assert current(one(tom, "works as a software engineer"))
    assert not current(one(tom, "works as a nurse"))
    assert current(one(tom, "is vegetarian"))
    assert not current(one(tom, "is pescatarian"))
    li = memories("demo-user-3")
    assert current(one(li, "是程序员"))
    assert not current(one(li, "是中学老师"))
    sam = memories("demo-user-5")
    assert current(one(sam, "works at Contoso"))
    assert not current(one(sam, "works at Northwind Traders"))
    assert current(one(sam, "puppy named Biscuit"))


def test_it_stores_the_writes_with_pii_tagged(demo: Namespace) -> None:
    assert demo.pii_policy == "tag"
    keys = KeyCache()
    tagged = {
        open_memory(keys, memory): set(memory.tags)
        for memory in Memory.objects.filter(
            namespace=demo, tags__overlap=["pii:email", "pii:phone"]
        )
    }
    emails = [text for text, tags in tagged.items() if "pii:email" in tags]
    phones = [text for text, tags in tagged.items() if "pii:phone" in tags]
    # Stored as written (the `tag` policy keeps the text), both as turns and as facts.
    assert any("mei.demo@example.com" in text for text in emails)
    assert any("li.demo@example.com" in text for text in emails)
    assert any(text.startswith("The user's email is") for text in emails)
    assert any("415-555-0132" in text for text in phones)
    assert any("(415) 555-0199" in text for text in phones)


def test_it_writes_the_instructions_for_the_whole_namespace(demo: Namespace) -> None:
    rules = memories(None, kind=Kind.PROCEDURAL)
    rule = one(rules, "Answer in the user's language; keep replies under 120 words.")
    assert rule.subject_id is None
    for external_id in ("demo-user-1", "demo-user-3"):
        subject = Subject.objects.get(namespace=demo, external_id=external_id)
        applying, _ = procedural_memories(namespace=demo, subject=subject, limit=10)
        assert rule.id in {memory.id for memory in applying}


def test_it_stores_the_document_as_shared_chunks(demo: Namespace) -> None:
    chunks = [
        (memory.source["chunk"], text, memory)
        for text, memory in memories(None).items()
        if "document" in memory.source
    ]
    assert len(chunks) >= 2
    assert len({memory.source["document"] for _, _, memory in chunks}) == 1
    assert sorted(number for number, _, _ in chunks) == list(range(len(chunks)))
    assert all(memory.metadata["title"] == DATA["documents"][0]["title"] for *_, memory in chunks)
    text = " ".join(text for _, text, _ in sorted(chunks, key=lambda c: c[0]))
    assert "48 hours" in text
    assert "Shellfish appears only in the seafood class" in text


def test_it_leaves_uncertain_memories_in_the_review_queue(demo: Namespace) -> None:
    pending = Memory.objects.filter(namespace=demo, status=Status.PENDING_REVIEW)
    assert pending.count() >= 2
    assert all(memory.confidence < settings.MEMORYHUB_REVIEW_BELOW for memory in pending)
    # One came through the pipeline: a hedged statement ("I think I'm lactose intolerant").
    assert one(memories("demo-user-4"), "lactose intolerant").status == Status.PENDING_REVIEW


def test_it_logs_the_recalls_and_context_assemblies(loaded: DemoReport, demo: Namespace) -> None:
    recalls = RecallLog.objects.filter(namespace=demo, purpose="recall")
    contexts = RecallLog.objects.filter(namespace=demo, purpose="context")
    assert recalls.count() == len(DATA["recalls"]) >= 10
    assert contexts.count() == len(DATA["contexts"]) >= 3
    assert all(log.memory_ids and log.subject_id for log in [*recalls, *contexts])
    assert len(loaded.tokens) == len(DATA["contexts"])
    assert all(tokens > 0 for tokens in loaded.tokens)


def test_it_spreads_the_activity_over_the_last_month(demo: Namespace) -> None:
    now = timezone.now()
    window = (now - timedelta(days=32), now - timedelta(minutes=10))
    created = list(Memory.objects.filter(namespace=demo).values_list("created_at", flat=True))
    turns = list(
        Message.objects.filter(session__namespace=demo).values_list("created_at", flat=True)
    )
    recalled = list(RecallLog.objects.filter(namespace=demo).values_list("created_at", flat=True))
    for moments in (created, turns, recalled):
        assert all(window[0] <= moment <= window[1] for moment in moments)
    assert len({moment.date() for moment in created}) >= 10
    assert len({moment.date() for moment in recalled}) >= 8
    assert max(created) - min(created) >= timedelta(days=25)
    # The old city ended when the move was told (two weeks ago), not when the demo loaded.
    hangzhou = one(memories("demo-user-1"), "lives in Hangzhou")
    assert hangzhou.valid_to is not None
    assert hangzhou.valid_to < now - timedelta(days=10)


def test_it_writes_through_the_audited_services(demo: Namespace) -> None:
    actions = set(AuditEvent.objects.filter(namespace_id=demo.pk).values_list("action", flat=True))
    assert {
        "namespace.create",
        "namespace.update",
        "memory.create",
        "memory.create_bulk",
        "document.ingest",
        "messages.ingest",
        "job.ingest.succeeded",
        "memory.supersede",
        "demo.load",
    } <= actions


def test_it_changes_nothing_when_loaded_again(demo: Namespace) -> None:
    before = (demo_counts(namespace=demo), AuditEvent.objects.count(), Memory.objects.count())
    report = demo_load(actor=demo_actor(name="tests"))
    assert not report.done
    assert "exists already" in report.message
    assert (
        demo_counts(namespace=demo),
        AuditEvent.objects.count(),
        Memory.objects.count(),
    ) == before


def test_it_removes_the_namespace_and_everything_in_it(demo: Namespace) -> None:
    namespace_id = demo.pk
    report = demo_remove(actor=demo_actor(name="tests"))
    assert report.done
    assert report.counts["memories"] > 0
    assert not Namespace.objects.filter(slug="demo").exists()
    assert not Memory.objects.filter(namespace_id=namespace_id).exists()
    assert not Subject.objects.filter(namespace_id=namespace_id).exists()
    assert not Session.objects.filter(namespace_id=namespace_id).exists()
    assert not Message.objects.filter(session__namespace_id=namespace_id).exists()
    assert not RecallLog.objects.filter(namespace_id=namespace_id).exists()
    assert not DataKey.objects.filter(namespace_id=namespace_id).exists()
    actions = set(
        AuditEvent.objects.filter(namespace_id=namespace_id).values_list("action", flat=True)
    )
    assert {"namespace.delete", "demo.remove"} <= actions
    assert not demo_status().done


def test_it_refuses_to_remove_a_demo_namespace_holding_other_subjects(demo: Namespace) -> None:
    subject_get_or_create(actor=demo_actor(name="tests"), namespace=demo, external_id="real-user")
    with pytest.raises(ApplicationError, match="did not make"):
        demo_remove(actor=demo_actor(name="tests"))
    assert Namespace.objects.filter(slug="demo").exists()
    assert demo_remove(actor=demo_actor(name="tests"), force=True).done
    assert not Namespace.objects.filter(slug="demo").exists()


def test_it_reports_the_status_with_counts(demo: Namespace) -> None:
    status = demo_status()
    assert status.done
    assert status.counts["subjects"] == 5
    assert status.counts["pending_review"] >= 2


def test_it_holds_a_current_expected_memory_for_every_eval_query(demo: Namespace) -> None:
    queries = read_eval()
    assert 10 <= len(queries) <= 20
    subjects = set(demo_subject_ids())
    for query in queries:
        assert query["subject"] in subjects
        findable = {**memories(None), **memories(query["subject"])}
        findable |= memories(query["subject"], kind=Kind.EPISODIC)
        assert any(
            current(memory) and phrase.lower() in text.lower()
            for text, memory in findable.items()
            for phrase in query["expected_contains"]
        ), query


def test_it_finds_most_eval_answers_even_with_the_test_embedder(demo: Namespace) -> None:
    report = demo_eval(actor=demo_actor(name="tests"), k=5)
    assert len(report.rows) == len(read_eval())
    assert report.hit_rate >= 0.9
    # Eval recalls are not served to anyone: the recall log is left alone.
    assert RecallLog.objects.filter(namespace=demo).count() == (
        len(DATA["recalls"]) + len(DATA["contexts"])
    )


def test_it_gives_the_dashboard_pages_something_to_show(
    demo: Namespace, alice_client: Client
) -> None:
    explorer = alice_client.get("/n/demo/memories/")
    assert explorer.status_code == 200
    assert "The user lives in Shanghai." in explorer.content.decode()
    review = alice_client.get("/n/demo/review/")
    assert review.status_code == 200
    assert "The user is lactose intolerant." in review.content.decode()
    subjects = alice_client.get("/n/demo/subjects/").content.decode()
    assert all(external_id in subjects for external_id in demo_subject_ids())
    playground = alice_client.post(
        "/playground/",
        {
            "namespace": "demo",
            "subject": "demo-user-1",
            "session": "demo-user-1-s3",
            "query": "Which Harbour Kitchen class is safe for my allergy?",
            "model": settings.MEMORYHUB_DEFAULT_MODEL,
            "reserve_tokens": 1024,
            "strategy": "summary_buffer",
            "recall_k": 20,
            "window": 10,
            "buffer_tokens": 2000,
            "placement": "edges",
        },
    )
    assert playground.status_code == 200
    page = playground.content.decode()
    assert "The user is allergic to shellfish." in page
    assert "The user is allergic to peanuts." not in page  # corrected, with the disputes seeded
    assert "keep replies under 120 words" in page
    audit = alice_client.get("/audit/")
    assert audit.status_code == 200
    assert "demo.load" in audit.content.decode()


def test_the_demo_question_is_told_shellfish_and_no_memory_says_peanuts(demo: Namespace) -> None:
    """The playground's own question, through the API as an app asks it: the corrected
    allergy's first statement ended with the peanut fact, so the prompt's memories state
    shellfish and none states peanuts; asked as of the day before the correction, the
    app would have been told peanuts."""
    from tests.conftest import api_client, make_api_key

    client = api_client(make_api_key([demo], ["context"]))
    url = f"/api/v1/namespaces/{demo.slug}/context"
    question = {
        "subject": "demo-user-1",
        "session": "demo-user-1-s3",
        "query": "Which Harbour Kitchen class is safe for my allergy?",
        "model": settings.MEMORYHUB_DEFAULT_MODEL,
    }
    response = client.post(url, question, format="json")
    assert response.status_code == 200, response.json()
    memories = next(s for s in response.json()["sections"] if s["name"] == "memories")
    served = Memory.objects.in_bulk([item["id"] for item in memories["items"]])
    texts = [open_memory(KeyCache(), memory) for memory in served.values()]
    assert "The user is allergic to shellfish." in texts
    assert [text for text in texts if "peanut" in text.lower()] == []
    keys = KeyCache()
    ended = Memory.objects.filter(
        namespace=demo, subject__external_id="demo-user-1", kind=Kind.SEMANTIC,
        valid_to__isnull=False,
    )  # fmt: skip
    (peanuts,) = [fact for fact in ended if "peanut" in open_memory(keys, fact)]
    assert peanuts.valid_to is not None
    then = client.post(
        url, question | {"as_of": (peanuts.valid_to - timedelta(minutes=1)).isoformat()},
        format="json",
    )  # fmt: skip
    assert then.status_code == 200, then.json()
    prompt = " ".join(message["content"] for message in then.json()["messages"])
    assert "peanuts" in prompt
    assert "The user is allergic to shellfish." not in prompt
