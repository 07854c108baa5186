"""What a person does in the portal, end to end: see (grouped, history apart, origin, uses,
expiry), correct, delete one, delete by topic, export (JSON under the schema, a printable
page), erase (at once, or scheduled and cancelled), pause, who used what, what the PII
policy blocked. Every action is audited as the subject's."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import jsonschema
import pytest
from django.db import connection
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.api.views import EXPORT_SCHEMA
from apps.memories.models import DataKey, Memory, MemoryVersion, Subject
from apps.memories.services import NewMemory, memories_create_bulk
from apps.namespaces.services import namespace_update
from apps.pipeline.models import Message, Session
from apps.privacy.models import PortalSession, ScheduledErasure
from apps.privacy.services import erasures_run_due
from apps.recall.models import RecallLog
from tests.privacy.conftest import open_portal, tell

pytestmark = pytest.mark.django_db


def text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def subject_events(subject_id, action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(subject_id=subject_id, action=action))


def test_the_memories_page_groups_by_kind_and_keeps_history_apart(acme, story) -> None:
    portal = open_portal(acme)
    page = text(portal.client.get(portal.url("memories/")))
    for heading in ("Facts and preferences", "Things you said or did", "How you want to be"):
        assert heading in page
    assert "The user lives in Shanghai" in page
    assert "Answer in short bullet points." in page
    assert "The user lives in Hangzhou" not in page  # superseded: history, not current
    history = text(portal.client.get(portal.url("memories/?kind=history")))
    assert "The user lives in Hangzhou" in history
    assert "no longer current" in history
    # Where it came from, how often used, until when: in words.
    assert "Learned from what you said in a conversation on" in page
    assert "“s2”" not in page  # no internal id: the app's name for the session
    assert "used in 1 answer" in page  # the story's recall served the Shanghai fact
    assert "Kept until you or the app delete it" in page
    assert "keeps bees" not in page  # another subject's


def test_a_memory_page_shows_its_history_and_what_replaced_it(acme, story) -> None:
    portal = open_portal(acme)
    old = text(portal.client.get(portal.url(f"memories/{story.old.pk}/")))
    assert "No longer current" in old
    assert "Replaced by:" in old
    assert "The user lives in Shanghai" in old
    assert 'id="correct"' not in old  # only current memories are corrected


def test_reading_the_portal_writes_no_dashboard_read_and_serves_no_recall(acme, story) -> None:
    portal = open_portal(acme)
    logs = RecallLog.objects.count()
    text(portal.client.get(portal.url("memories/")))
    text(portal.client.post(portal.url("memories/"), {"q": "Shanghai"}))
    assert RecallLog.objects.count() == logs


def test_a_correction_is_a_new_version_marked_as_the_subjects(acme, story) -> None:
    portal = open_portal(acme)
    response = portal.client.post(
        portal.url(f"memories/{story.fact.pk}/correct/"), {"content": "The user lives in Suzhou."}
    )
    assert response.status_code == 302
    story.fact.refresh_from_db()
    assert story.fact.version == 2
    assert "corrected_at" in story.fact.metadata
    assert story.fact.confidence == 1.0
    version = MemoryVersion.objects.get(memory=story.fact, version=2)
    assert version.changed_by.startswith("subject:")
    assert version.reason == "corrected by the subject"
    (event,) = subject_events(portal.subject.pk, "memory.update")
    assert (event.actor_type, event.object_id) == ("subject", str(story.fact.pk))
    page = text(portal.client.get(portal.url(f"memories/{story.fact.pk}/")))
    assert "The user lives in Suzhou." in page
    earlier = page[page.index("Earlier wordings") :]
    assert "The user lives in Shanghai" in earlier
    assert "Suzhou" not in earlier  # what it says now is no earlier wording
    printed = text(portal.client.get(portal.url("export/print/")))
    earlier = printed[printed.index("Earlier wordings") :]
    assert "The user lives in Shanghai" in earlier
    assert "Suzhou" not in earlier


@pytest.mark.parametrize("content", ["", "   ", "x" * 40_000])
def test_a_bad_correction_changes_nothing(acme, story, content) -> None:
    portal = open_portal(acme)
    response = portal.client.post(
        portal.url(f"memories/{story.fact.pk}/correct/"), {"content": content}
    )
    assert response.status_code == 422
    assert 'role="alert"' in response.content.decode()
    story.fact.refresh_from_db()
    assert story.fact.version == 1


def test_an_unchanged_correction_is_said_so(acme, story) -> None:
    portal = open_portal(acme)
    from apps.memories.row_encryption import KeyCache, open_memory

    same = open_memory(KeyCache(), story.fact)
    response = portal.client.post(
        portal.url(f"memories/{story.fact.pk}/correct/"), {"content": same}
    )
    assert response.status_code == 422
    assert "That is what is remembered already." in response.content.decode()


def test_delete_one_asks_first_then_deletes_it_with_its_versions(acme, story) -> None:
    portal = open_portal(acme)
    confirm = text(portal.client.get(portal.url(f"memories/{story.fact.pk}/delete/")))
    assert "Delete this memory?" in confirm
    assert "The user lives in Shanghai" in confirm
    assert Memory.objects.filter(pk=story.fact.pk).exists()
    response = portal.client.post(portal.url(f"memories/{story.fact.pk}/delete/"))
    assert response.status_code == 302
    assert not Memory.objects.filter(pk=story.fact.pk).exists()
    assert not MemoryVersion.objects.filter(memory_id=story.fact.pk).exists()
    # Out of the recall log too: the story's recall named it.
    assert not RecallLog.objects.filter(memory_ids__contains=[story.fact.pk]).exists()
    (event,) = subject_events(portal.subject.pk, "memory.delete")
    assert event.actor_type == "subject"


def test_delete_by_topic_previews_then_deletes_only_the_ticked(acme, story) -> None:
    portal = open_portal(acme)
    preview = text(portal.client.post(portal.url("forget/"), {"q": "Shanghai"}))
    assert "Delete the ticked memories" in preview
    ticked = [str(story.fact.pk)]
    assert ticked[0] in preview
    kept = Memory.objects.filter(subject=portal.subject).count() - 1
    response = portal.client.post(
        portal.url("forget/"), {"confirm": "1", "memory": [*ticked, str(story.other.pk)]}
    )
    assert response.status_code == 302
    assert not Memory.objects.filter(pk=story.fact.pk).exists()
    assert Memory.objects.filter(pk=story.other.pk).exists()  # not theirs: ignored
    assert Memory.objects.filter(subject=portal.subject).count() == kept
    (event,) = subject_events(portal.subject.pk, "memory.bulk_delete")
    assert event.details["memories"] == 1
    assert event.details["by"] == "topic"


def test_the_json_export_is_valid_under_the_published_schema(acme, story) -> None:
    portal = open_portal(acme)
    response = portal.client.get(portal.url("export/json/"))
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    document = json.loads(response.content)
    jsonschema.validate(document, EXPORT_SCHEMA, cls=jsonschema.Draft202012Validator)
    assert {m["content"] for m in document["memories"]} >= {"Answer in short bullet points."}
    assert "The user keeps bees." not in response.content.decode()
    (event,) = subject_events(portal.subject.pk, "subject.export")
    assert event.actor_type == "subject"


def test_the_printable_export_shows_everything_readably(acme, story) -> None:
    portal = open_portal(acme)
    page = text(portal.client.get(portal.url("export/print/")))
    assert "The user lives in Shanghai" in page
    assert "The user lives in Hangzhou" in page
    assert "Answer in short bullet points." in page
    assert "@media print" not in page


def test_erase_needs_the_typed_words_then_leaves_nothing(acme, story) -> None:
    portal = open_portal(acme)
    subject = portal.subject
    refused = portal.client.post(portal.url("erase/"), {"confirmation": "yes"})
    assert refused.status_code == 200
    assert "Type the words exactly as shown." in refused.content.decode()
    assert Subject.objects.filter(pk=subject.pk).exists()
    receipt = portal.client.post(portal.url("erase/"), {"confirmation": "Erase everything"})
    page = text(receipt)
    event = AuditEvent.objects.get(action="subject.erase", subject_id=subject.pk)
    assert event.actor_type == "subject"
    assert event.details["receipt_hash"] in page
    assert f"<dd>{event.details['memories_deleted']}</dd>" in page
    # Zero rows, the data key gone, no session left to use.
    assert not Subject.objects.filter(pk=subject.pk).exists()
    assert not DataKey.objects.filter(subject_id=subject.pk).exists()
    assert not Memory.objects.filter(subject_id=subject.pk).exists()
    assert not Session.objects.filter(subject_id=subject.pk).exists()
    assert not Message.objects.filter(session__subject_id=subject.pk).exists()
    assert not RecallLog.objects.filter(subject_id=subject.pk).exists()
    assert not PortalSession.objects.filter(subject_id=subject.pk).exists()
    assert receipt.cookies["memoryhub_portal"].value == ""
    assert portal.client.get(portal.url()).status_code == 404
    with connection.cursor() as cursor:  # no canary of theirs anywhere in the store
        cursor.execute("SELECT count(*) FROM memories_memory WHERE subject_id = %s", [subject.pk])
        assert cursor.fetchone()[0] == 0


def test_with_a_grace_period_erasure_is_scheduled_cancellable_then_runs(acme, story) -> None:
    namespace_update(actor=Actor.system("t"), namespace=acme.namespace, erasure_grace_days=7)
    portal = open_portal(acme)
    subject = portal.subject
    response = portal.client.post(portal.url("erase/"), {"confirmation": "erase everything"})
    assert response.status_code == 302
    scheduled = ScheduledErasure.objects.get(subject=subject)
    assert timedelta(days=6, hours=23) < scheduled.run_at - timezone.now() <= timedelta(days=7)
    page = text(portal.client.get(portal.url("erase/")))
    assert "Your erasure is scheduled for" in page
    assert "Cancel the erasure" in page
    assert "will be erased on" in text(portal.client.get(portal.url()))
    # Cancelled: nothing runs.
    assert portal.client.post(portal.url("erase/cancel/")).status_code == 302
    assert not ScheduledErasure.objects.exists()
    assert erasures_run_due(now=timezone.now() + timedelta(days=8)) == 0
    assert Subject.objects.filter(pk=subject.pk).exists()
    # Asked again, it runs when due, not before; then the data key is gone.
    portal.client.post(portal.url("erase/"), {"confirmation": "erase everything"})
    assert erasures_run_due() == 0
    assert erasures_run_due(now=timezone.now() + timedelta(days=8)) == 1
    assert not Subject.objects.filter(pk=subject.pk).exists()
    assert not DataKey.objects.filter(subject_id=subject.pk).exists()
    actions = [
        e.action
        for e in AuditEvent.objects.filter(
            subject_id=subject.pk, action__startswith="subject.erase"
        )
    ]
    assert actions == [
        "subject.erase.schedule",
        "subject.erase.cancel",
        "subject.erase.schedule",
        "subject.erase",
    ]


def test_pause_is_honoured_by_messages_and_memories(
    acme, story, django_capture_on_commit_callbacks
) -> None:
    portal = open_portal(acme)
    assert portal.client.post(portal.url("pause/"), {"paused": "1"}).status_code == 302
    assert Subject.objects.get(pk=portal.subject.pk).paused
    (event,) = subject_events(portal.subject.pk, "subject.pause")
    assert event.actor_type == "subject"
    before = Memory.objects.filter(subject=portal.subject).count()
    body = {
        "subject": "u1",
        "session": "s3",
        "messages": [{"role": "user", "content": "I have a dog named Max."}],
    }
    with django_capture_on_commit_callbacks(execute=True):
        sent = acme.client.post(acme.url("messages"), body, format="json")
    assert sent.status_code in (201, 202), sent.json()
    job = acme.client.get(f"/api/v1/jobs/{sent.json()['id']}").json()
    assert job["result"]["skipped"] == "paused"
    refused = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "The user has a dog."}, format="json"
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "subject_paused"
    assert Memory.objects.filter(subject=portal.subject).count() == before
    assert acme.client.get(acme.url("subjects/u1")).json()["paused"] is True
    # Resumed: the app may write again.
    portal.client.post(portal.url("pause/"), {"paused": "0"})
    again = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "The user has a dog."}, format="json"
    )
    assert again.status_code == 201


def test_who_used_what_names_the_app_and_the_administrator(acme, story, alice) -> None:
    from django.test import Client

    from apps.namespaces.services import membership_set

    membership_set(actor=Actor.system("t"), namespace=acme.namespace, user=alice, role="viewer")
    admin = Client()
    admin.force_login(alice)
    assert admin.get(f"/n/acme/memories/{story.rule.pk}/").status_code == 200
    portal = open_portal(acme)
    page = text(portal.client.get(portal.url("activity/")))
    assert "the app “acme app”" in page
    assert "to answer you (recall)" in page
    assert "The user lives in Shanghai" in page  # what the recall served
    assert f"an administrator ({alice.get_username()})" in page
    assert "viewed in the dashboard" in page
    assert "Answer in short bullet points." in page


def test_what_the_pii_policy_blocked_names_categories_never_values(acme, story) -> None:
    namespace_update(actor=Actor.system("t"), namespace=acme.namespace, pii_policy="redact")
    acme.namespace.refresh_from_db()
    tell(acme, "u1", "Mail me at mei.lin@example.com please.", session="s4")
    namespace_update(actor=Actor.system("t"), namespace=acme.namespace, pii_policy="reject")
    refused = acme.client.post(
        acme.url("memories"),
        {"subject": "u1", "content": "Card 4111 1111 1111 1111"},
        format="json",
    )
    assert refused.status_code == 422
    portal = open_portal(acme)
    page = text(portal.client.get(portal.url("blocked/")))
    assert "e-mail address" in page
    assert "removed before anything was stored" in page
    assert "card number" in page
    assert "refused: nothing was stored" in page
    assert "mei.lin" not in page
    assert "4111" not in page
    for event in AuditEvent.objects.filter(subject_id=portal.subject.pk):
        assert "mei.lin" not in json.dumps(event.details)
        assert "4111" not in json.dumps(event.details)


def test_a_tagged_write_whose_memories_were_deleted_says_so(acme, story) -> None:
    namespace_update(actor=Actor.system("t"), namespace=acme.namespace, pii_policy="tag")
    acme.namespace.refresh_from_db()
    tell(acme, "u1", "Mail me at mei.lin@example.com please.", session="s4")
    portal = open_portal(acme)
    marked = Memory.objects.filter(subject=portal.subject, tags__contains=["pii:email"])
    page = text(portal.client.get(portal.url("blocked/")))
    assert "mei.lin@example.com" in page  # stored, so shown, and not called "kept out"
    assert "kept out" not in page
    n = marked.count()
    assert n >= 1
    assert (f"{n} memories, marked" if n > 1 else "1 memory, marked") in page
    for memory in marked:
        portal.client.post(portal.url(f"memories/{memory.pk}/delete/"))
    page = text(portal.client.get(portal.url("blocked/")))
    assert "mei.lin@example.com" not in page
    assert "none of it: deleted since" in page
    assert "No memory kept about you is marked as holding personal data." in page


def test_a_namespace_that_does_not_look_says_so(acme, story) -> None:
    namespace_update(actor=Actor.system("t"), namespace=acme.namespace, pii_policy="allow")
    acme.namespace.refresh_from_db()
    tell(acme, "u1", "Mail me at mei.lin@example.com please.", session="s4")
    portal = open_portal(acme)
    page = text(portal.client.get(portal.url("blocked/")))
    assert "does not look for personal data" in page
    assert "not known: not looked for" in page
    assert "Nothing was looked for, so nothing is listed here." in page
    assert "No personal data of these kinds was found" not in page


def test_the_language_is_switchable_and_kept(acme, story) -> None:
    portal = open_portal(acme, locale="en")
    response = portal.client.post(
        portal.url("language/"), {"language": "zh-hans", "next": portal.url("memories/")}
    )
    assert response.status_code == 302
    assert response["Location"] == portal.url("memories/")
    (event,) = subject_events(portal.subject.pk, "portal.language")
    assert (event.actor_type, event.details) == ("subject", {"locale": "zh-hans"})
    page = text(portal.client.get(portal.url("memories/")))
    assert '<html lang="zh-hans">' in page
    # An address elsewhere is not followed.
    away = portal.client.post(
        portal.url("language/"), {"language": "en", "next": "https://evil.example/"}
    )
    assert away["Location"] == portal.url()


def test_the_beat_task_runs_due_erasures(acme, story, settings) -> None:
    from memoryhub.celery import app

    namespace_update(actor=Actor.system("t"), namespace=acme.namespace, erasure_grace_days=1)
    portal = open_portal(acme)
    portal.client.post(portal.url("erase/"), {"confirmation": "erase everything"})
    app.loader.import_default_modules()  # as a worker or beat does: autodiscovery
    task = app.tasks["privacy.erase_due"]
    assert task.apply().get() == 0  # not due yet
    ScheduledErasure.objects.update(run_at=timezone.now() - timedelta(seconds=1))
    assert task.apply().get() == 1
    assert not Subject.objects.filter(pk=portal.subject.pk).exists()
    assert "privacy.erase_due" in {
        entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }


def test_one_failing_erasure_does_not_stop_the_others(acme, story, monkeypatch) -> None:
    from apps.privacy import services

    namespace_update(actor=Actor.system("t"), namespace=acme.namespace, erasure_grace_days=1)
    for external_id in ("u1", "u2"):
        portal = open_portal(acme, external_id)
        portal.client.post(portal.url("erase/"), {"confirmation": "erase everything"})
    real = services.subject_erase
    calls = []

    def flaky(*, actor, subject, via):
        calls.append(subject.external_id)
        if len(calls) == 1:
            raise RuntimeError("the first one fails")
        return real(actor=actor, subject=subject, via=via)

    monkeypatch.setattr(services, "subject_erase", flaky)
    later = timezone.now() + timedelta(days=2)
    assert erasures_run_due(now=later) == 1
    assert ScheduledErasure.objects.count() == 1  # the failed one stays scheduled
    monkeypatch.setattr(services, "subject_erase", real)
    assert erasures_run_due(now=later) == 1
    assert not ScheduledErasure.objects.exists()


@pytest.mark.parametrize(
    "before", ["2024-13-01T00:00:00", "2024-01-01T25:00", "nonsense", "2024-01-01"]
)
def test_a_bad_activity_cursor_is_the_first_page(acme, story, before) -> None:
    portal = open_portal(acme)
    page = text(portal.client.get(portal.url(f"activity/?before={before}")))
    assert "Who used your memories" in page


def test_every_action_names_its_portal_session_and_the_start_names_the_link(acme, story) -> None:
    portal = open_portal(acme)
    portal.client.post(portal.url("pause/"), {"paused": "1"})
    session = PortalSession.objects.get()
    (pause,) = subject_events(portal.subject.pk, "subject.pause")
    assert pause.actor_name == f"portal session {session.pk}"
    start = AuditEvent.objects.get(action="portal.session.start", outcome="success")
    assert start.details["link"] == str(session.link_id)
    assert start.details["link_by"] == "api_key:acme app"


def test_deleting_something_said_deletes_that_turn_too(acme, story) -> None:
    portal = open_portal(acme)
    turn = Memory.objects.get(subject=portal.subject, kind="episodic", session_key="s2")
    message = Message.objects.get(pk=turn.source["message"])
    portal.client.post(portal.url(f"memories/{turn.pk}/delete/"))
    assert not Memory.objects.filter(pk=turn.pk).exists()
    assert not Message.objects.filter(pk=message.pk).exists()
    assert Message.objects.filter(session__subject=portal.subject).count() == 1  # s1's stays
    (event,) = subject_events(portal.subject.pk, "memory.delete")
    assert event.details["turns"] == 1


def test_with_no_way_back_set_the_header_offers_a_way_out(acme, story) -> None:
    portal = open_portal(acme)  # the link has no return URL
    html = portal.client.get(portal.url("")).content.decode()
    tools = html[html.index('class="portal-tools"') : html.index("</header>")]
    assert "Back to the app" not in tools
    assert f'action="/portal/{portal.subject.pk}/leave/"' in tools
    assert "Leave this page" in tools


def test_a_playground_trial_is_no_answer_the_app_was_served(acme, story) -> None:
    RecallLog.objects.create(
        namespace=acme.namespace,
        subject=story.fact.subject,
        purpose="playground",
        actor_type="user",
        memory_ids=[story.fact.pk],
    )
    portal = open_portal(acme)
    page = text(portal.client.get(portal.url("memories/")))
    assert "used in 1 answer" in page  # the app's one recall, not the administrator's trial
    assert "used in 2 answers" not in page


def test_a_kinds_page_leads_to_older_memories_each_shown_once(acme) -> None:
    notes = memories_create_bulk(
        actor=Actor.system("tests"),
        namespace=acme.namespace,
        items=[NewMemory(content=f"Note {i}.", subject_external_id="u1") for i in range(55)],
        embed=False,
    )
    # Twenty written in the same instant: the cut between pages falls inside the tie.
    moment = timezone.now() - timedelta(days=1)
    mine = Memory.objects.filter(pk__in=[note.pk for note in notes])
    mine.filter(pk__in=[note.pk for note in notes[20:40]]).update(created_at=moment)
    newest_first = mine.order_by("-created_at", "-id")
    portal = open_portal(acme)
    first = text(portal.client.get(portal.url("memories/?kind=semantic")))
    older = re.search(r'<a href="(\?kind=semantic&amp;after=[^"]+)">Older</a>', first)
    assert older
    second = text(portal.client.get(portal.url("memories/") + older.group(1).replace("&amp;", "&")))
    assert "Older</a>" not in second
    shown = re.findall(rf"/portal/{portal.subject.pk}/memories/([0-9a-f-]{{36}})/", first + second)
    assert shown == [str(m.pk) for m in newest_first]
