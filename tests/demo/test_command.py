"""`manage.py demo load|remove|status|eval`, and when `make run` (`load --if-enabled`)
loads the demo: on a first start with MEMORYHUB_DEMO on, and only then."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from apps.demo import services
from apps.demo.services import LATEST_BEFORE_NOW, read_data, timeline
from apps.memories.models import Memory
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create


def demo(*args: str) -> str:
    out = io.StringIO()
    call_command("demo", *args, stdout=out)
    return out.getvalue()


def loaded() -> bool:
    return Namespace.objects.filter(slug="demo").exists()


@pytest.mark.django_db
def test_it_loads_nothing_on_start_when_the_demo_is_switched_off(
    settings: Any,
) -> None:
    settings.MEMORYHUB_DEMO = False
    out = demo("load", "--if-enabled")
    assert "Demo not loaded: MEMORYHUB_DEMO is off." in out
    assert not loaded()
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_it_loads_on_a_first_start_and_prints_the_counts_and_time(
    settings: Any,
) -> None:
    settings.MEMORYHUB_DEMO = True
    out = demo("load", "--if-enabled")
    assert loaded()
    assert "Loaded the demo namespace 'demo'. (" in out
    assert " s)" in out
    for line in ("subjects: 5", "sessions: 14", "recalls: 12", "context assemblies: 4"):
        assert f"  {line}\n" in out
    assert "pending review: " in out
    assert "/n/demo/memories/" in out
    count = Memory.objects.count()
    again = demo("load", "--if-enabled")
    assert "exists already; nothing loaded" in again
    assert Memory.objects.count() == count
    status = demo("status")
    assert "The demo namespace 'demo' is loaded." in status
    assert "  subjects: 5\n" in status


@pytest.mark.django_db
def test_it_does_not_load_again_on_start_after_a_removal(settings: Any, system_actor: Any) -> None:
    settings.MEMORYHUB_DEMO = True
    namespace_create(actor=system_actor, slug="demo")  # as good as loaded, for this test
    removed = demo("remove")
    assert "Removed the demo namespace 'demo'." in removed
    assert "  subjects: 0\n" in removed
    assert not loaded()
    out = demo("load", "--if-enabled")
    assert "Demo not loaded: it was removed before" in out
    assert not loaded()
    assert "it was removed" in demo("status")


@pytest.mark.django_db
def test_it_leaves_an_install_with_namespaces_of_its_own_alone(
    settings: Any, system_actor: Any
) -> None:
    settings.MEMORYHUB_DEMO = True
    namespace_create(actor=system_actor, slug="support-bot")
    out = demo("load", "--if-enabled")
    assert "this install has namespaces already" in out
    assert not loaded()


@pytest.mark.django_db
def test_it_says_when_there_is_nothing_to_remove_or_evaluate() -> None:
    assert "There is no demo namespace 'demo'; nothing removed." in demo("remove")
    assert "is not loaded" in demo("status")
    with pytest.raises(CommandError, match="not loaded"):
        demo("eval")


@pytest.mark.django_db
def test_it_refuses_to_remove_someone_elses_namespace_demo(system_actor: Any) -> None:
    from apps.memories.services import subject_get_or_create

    namespace = namespace_create(actor=system_actor, slug="demo")
    subject_get_or_create(actor=system_actor, namespace=namespace, external_id="customer-42")
    with pytest.raises(CommandError, match="did not make"):
        demo("remove")
    assert loaded()


@pytest.mark.django_db
def test_it_leaves_nothing_behind_when_a_load_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> None:
        raise RuntimeError("the recall step failed")

    # The first recall comes after the first sessions of four subjects were ingested.
    monkeypatch.setattr(services, "_recall", broken)
    with pytest.raises(RuntimeError, match="recall step failed"):
        services.demo_load(actor=services.demo_actor(name="tests"))
    assert not loaded()
    assert not Memory.objects.exists()


def test_it_keeps_the_timeline_in_the_past_in_order_with_its_times_of_day() -> None:
    data = read_data()
    early = datetime(2026, 3, 10, 7, 0, tzinfo=UTC)  # before a `days_ago: 0` step at 09:00
    late = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)
    for now in (early, late):
        events = timeline(data=data, now=now)
        assert events == sorted(events)
        assert max(e.at for e in events) <= now - LATEST_BEFORE_NOW
        assert min(e.at for e in events) >= now - timedelta(days=32)
    newest_early = max(timeline(data=data, now=early)).at
    newest_late = max(timeline(data=data, now=late)).at
    assert newest_early == newest_late - timedelta(days=1)  # moved a whole day back
    assert (newest_early.hour, newest_early.minute) == (9, 0)
    # Each subject's sessions keep the order of the file (consolidation depends on it).
    for subject in data["subjects"]:
        steps = [
            e.item["external_id"] for e in timeline(data=data, now=early) if e.kind == "session"
        ]
        mine = [s for s in steps if s.startswith(subject["external_id"] + "-")]
        assert mine == [s["external_id"] for s in subject["sessions"]]
