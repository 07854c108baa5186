"""The chain's recorded verification: a walk from the genesis or from the last intact walk's
end, its result (intact, broken at the first broken link, unable to finish), the beat task
and the latest status the overview reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import OperationalError, connection
from django.utils import timezone

from apps.audit import services, tasks
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, ChainVerification, VerificationStatus
from apps.audit.selectors import chain_status_latest, chain_verification_running
from apps.audit.services import (
    audit_record,
    chain_verification_execute,
    chain_verification_run,
    chain_verification_start,
)
from memoryhub.celery import app as celery_app

ACTOR = Actor.system("tests")


@contextmanager
def bypassing_triggers() -> Iterator[Any]:
    """As the database superuser, with the append-only trigger off (a DBA could)."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            yield cursor
        finally:
            cursor.execute("SET session_replication_role = origin")


def append(count: int) -> list[AuditEvent]:
    return [
        audit_record(actor=ACTOR, action="test.event", object_id=str(n), details={"n": n})
        for n in range(count)
    ]


def newest() -> AuditEvent:
    event = AuditEvent.objects.order_by("-id").first()
    assert event is not None
    return event


@pytest.fixture
def events(db: None) -> list[AuditEvent]:
    return append(6)


def test_it_reports_an_intact_chain_through_its_newest_event(events: list[AuditEvent]) -> None:
    verification = chain_verification_run(requested_by="user:alice", full=True)
    last = newest()  # the verification's own audit event is the newest
    assert verification.status == VerificationStatus.SUCCEEDED
    assert verification.full
    assert verification.checked == AuditEvent.objects.count()
    assert verification.through_event_id == last.pk
    assert verification.through_at == last.created_at
    assert verification.through_hash == last.hash
    assert verification.broken_event_id is None
    assert verification.finished_at is not None
    stored = ChainVerification.objects.get(pk=verification.pk)
    assert (stored.status, stored.checked, stored.through_event_id) == (
        VerificationStatus.SUCCEEDED,
        verification.checked,
        last.pk,
    )


def test_it_names_an_edited_event_as_the_first_broken_link(events: list[AuditEvent]) -> None:
    target = events[2]
    with bypassing_triggers() as cursor:
        cursor.execute(
            "UPDATE audit_auditevent SET details = '{\"n\": 99}'::jsonb WHERE id = %s", [target.pk]
        )
    verification = chain_verification_run(requested_by="beat", full=True)
    assert verification.status == VerificationStatus.BROKEN
    assert verification.broken_event_id == target.pk
    assert verification.broken_reason == "hash does not match the event's fields"
    assert verification.through_event_id == events[1].pk  # intact up to the one before
    assert ChainVerification.objects.get(pk=verification.pk).broken_event_id == target.pk


def test_it_names_the_event_after_a_deleted_one(events: list[AuditEvent]) -> None:
    with bypassing_triggers() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE id = %s", [events[3].pk])
    verification = chain_verification_run(requested_by="beat", full=True)
    assert verification.status == VerificationStatus.BROKEN
    assert verification.broken_event_id == events[4].pk
    assert verification.broken_reason.startswith("prev_hash")


def test_it_notices_events_cut_off_the_end(events: list[AuditEvent]) -> None:
    verification = chain_verification_start(requested_by="beat", full=True)
    with bypassing_triggers() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE id >= %s", [events[4].pk])
    result = chain_verification_execute(verification_id=verification.pk)
    assert result is not None
    assert result.status == VerificationStatus.BROKEN
    assert "truncated" in result.broken_reason


def test_it_walks_only_the_new_events_after_an_intact_full_walk(events: list[AuditEvent]) -> None:
    first = chain_verification_run(requested_by="beat", full=True)
    append(3)
    second = chain_verification_run(requested_by="beat")
    assert not second.full
    assert second.from_event_id == first.through_event_id
    assert first.through_event_id is not None
    assert second.checked == newest().pk - first.through_event_id  # 3 + its own audit event
    assert second.to_check == second.checked
    assert second.through_event_id == newest().pk
    assert second.status == VerificationStatus.SUCCEEDED


def test_it_walks_everything_when_the_last_full_walk_is_older_than_a_day(
    events: list[AuditEvent],
) -> None:
    first = chain_verification_run(requested_by="beat", full=True)
    ChainVerification.objects.filter(pk=first.pk).update(
        finished_at=timezone.now() - services.FULL_VERIFICATION_EVERY - timedelta(minutes=1)
    )
    second = chain_verification_run(requested_by="beat")
    assert second.full
    assert second.from_event_id is None
    assert second.checked == AuditEvent.objects.count()


def test_it_walks_everything_when_the_anchor_event_was_changed(events: list[AuditEvent]) -> None:
    first = chain_verification_run(requested_by="beat", full=True)
    anchor = first.through_event_id
    with bypassing_triggers() as cursor:
        cursor.execute("UPDATE audit_auditevent SET action = 'test.edited' WHERE id = %s", [anchor])
    second = chain_verification_run(requested_by="beat")
    assert second.full
    assert second.status == VerificationStatus.BROKEN
    assert second.broken_event_id == anchor


def test_it_finds_a_break_after_the_anchor_of_an_incremental_walk(
    events: list[AuditEvent],
) -> None:
    chain_verification_run(requested_by="beat", full=True)
    later = append(3)
    with bypassing_triggers() as cursor:
        cursor.execute(
            "UPDATE audit_auditevent SET actor_name = 'mallory' WHERE id = %s", [later[1].pk]
        )
    verification = chain_verification_run(requested_by="beat")
    assert not verification.full
    assert verification.status == VerificationStatus.BROKEN
    assert verification.broken_event_id == later[1].pk


def test_it_leaves_a_finished_verification_as_it_is(events: list[AuditEvent]) -> None:
    verification = chain_verification_run(requested_by="beat", full=True)
    append(2)
    again = chain_verification_execute(verification_id=verification.pk)
    assert again is not None
    assert (again.checked, again.through_event_id, again.finished_at) == (
        verification.checked,
        verification.through_event_id,
        ChainVerification.objects.get(pk=verification.pk).finished_at,
    )


def test_it_returns_nothing_for_a_verification_that_is_gone(db: None) -> None:
    assert chain_verification_execute(verification_id=987654) is None


def test_it_audits_the_request_of_a_verification(events: list[AuditEvent]) -> None:
    user = Actor(type="user", id="7", name="alice")
    verification = chain_verification_start(requested_by="user:alice", actor=user, full=True)
    event = newest()
    assert (event.action, event.actor_name, event.object_type, event.object_id) == (
        "audit.chain_verify",
        "alice",
        "chain_verification",
        str(verification.pk),
    )
    assert event.details == {"full": True}
    assert verification.status == VerificationStatus.RUNNING
    assert verification.requested_by == "user:alice"


def test_it_marks_a_walk_that_errors_as_unable_to_finish(
    events: list[AuditEvent], monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*, event: AuditEvent) -> dict[str, Any]:
        raise ValueError("boom")

    started = chain_verification_start(requested_by="beat", full=True)
    monkeypatch.setattr(services, "event_as_chain_fields", explode)
    verification = chain_verification_execute(verification_id=started.pk)
    assert verification is not None
    assert verification.status == VerificationStatus.FAILED
    assert verification.broken_reason == "ValueError"
    assert verification.finished_at is not None


def test_it_gives_the_newest_finished_verification_as_the_latest_status(
    events: list[AuditEvent],
) -> None:
    assert chain_status_latest() is None
    done = chain_verification_run(requested_by="beat", full=True)
    running = chain_verification_start(requested_by="beat")
    latest = chain_status_latest()
    assert latest is not None
    assert latest.pk == done.pk
    found = chain_verification_running()
    assert found is not None
    assert found.pk == running.pk


def test_it_is_the_task_beat_schedules_hourly() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["audit-chain-verify"]
    assert entry["task"] == "audit.chain_verify"
    assert entry["schedule"] == 3600.0
    registered = celery_app.tasks[str(entry["task"])]
    assert registered.name == tasks.chain_verify.name == "audit.chain_verify"
    assert registered.run.__module__ == "apps.audit.tasks"


def test_it_records_a_beat_verification_from_the_task(events: list[AuditEvent]) -> None:
    verification_id = tasks.chain_verify.apply().get()
    verification = ChainVerification.objects.get(pk=verification_id)
    assert verification.requested_by == "beat"
    assert verification.status == VerificationStatus.SUCCEEDED
    assert verification.through_event_id == newest().pk


def test_it_gives_up_on_a_lost_database_after_the_tasks_retries(
    events: list[AuditEvent], monkeypatch: pytest.MonkeyPatch
) -> None:
    verification = chain_verification_start(requested_by="beat", full=True)

    def lost(*, verification_id: int) -> None:
        raise OperationalError("server closed the connection")

    monkeypatch.setattr(tasks, "chain_verification_execute", lost)
    monkeypatch.setattr(tasks.chain_verify, "max_retries", 0)
    with pytest.raises(OperationalError):
        tasks.chain_verify.apply(kwargs={"verification_id": verification.pk}).get()
    verification.refresh_from_db()
    assert verification.status == VerificationStatus.FAILED
    assert verification.broken_reason == "OperationalError"


def test_it_runs_a_requested_verification_after_the_commit_without_a_broker(
    events: list[AuditEvent], django_capture_on_commit_callbacks: Any
) -> None:
    assert settings.CELERY_TASK_ALWAYS_EAGER
    verification = chain_verification_start(requested_by="user:alice", full=True)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        tasks.chain_verification_enqueue(verification.pk)
    assert len(callbacks) == 1
    verification.refresh_from_db()
    assert verification.status == VerificationStatus.SUCCEEDED


def test_it_marks_a_verification_the_broker_refused(
    events: list[AuditEvent],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from kombu.exceptions import OperationalError as BrokerError

    settings.CELERY_TASK_ALWAYS_EAGER = False

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise BrokerError("connection refused")

    monkeypatch.setattr(tasks.chain_verify, "delay", refuse)  # sent after the commit
    verification = chain_verification_start(requested_by="user:alice")
    with django_capture_on_commit_callbacks(execute=True):
        tasks.chain_verification_enqueue(verification.pk)
    verification.refresh_from_db()
    assert verification.status == VerificationStatus.FAILED
    assert verification.finished_at is not None


def test_it_marks_walks_abandoned_long_ago_when_the_next_one_starts(db: None) -> None:
    stale = chain_verification_start(requested_by="beat")
    recent = chain_verification_start(requested_by="beat")
    ChainVerification.objects.filter(pk=stale.pk).update(
        started_at=timezone.now() - services.ABANDONED_AFTER - timedelta(minutes=1)
    )
    chain_verification_start(requested_by="beat")
    stale.refresh_from_db()
    recent.refresh_from_db()
    assert (stale.status, stale.broken_reason) == (VerificationStatus.FAILED, "abandoned")
    assert stale.finished_at is not None
    assert recent.status == VerificationStatus.RUNNING
