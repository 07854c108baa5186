"""GET /api/v1/namespaces/{ns}/audit filtered by `action`, `outcome`, `subject_id`, `since` and
`until` (valid values): each returns exactly the events it matches. The expected events are
known by what each step of the story wrote, not by asking the log the same question."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
from django.db.models import Max
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.memories.models import Subject
from tests.conftest import Tenant, api_client, make_api_key


@dataclass
class Story:
    """What happened in acme, in order, with the ids of the events each step wrote."""

    steps: dict[str, set[int]] = field(default_factory=dict)
    boundaries: list[datetime] = field(default_factory=list)
    subjects: dict[str, str] = field(default_factory=dict)  # external id -> subject uuid

    def ids(self, *steps: str) -> set[int]:
        return set().union(*(self.steps[step] for step in steps))

    @property
    def everything(self) -> set[int]:
        return self.ids(*self.steps)


def newest_id() -> int:
    return AuditEvent.objects.aggregate(newest=Max("id"))["newest"] or 0


def step(story: Story, tenant: Tenant, name: str, action: Callable[[], Any]) -> None:
    before = newest_id()
    action()
    written = AuditEvent.objects.filter(id__gt=before, namespace_id=tenant.namespace.pk)
    story.steps[name] = set(written.values_list("id", flat=True))
    assert story.steps[name], f"step {name!r} wrote no event in {tenant.slug}"


def boundary(story: Story) -> None:
    now = timezone.now()
    assert AuditEvent.objects.filter(created_at__gte=now).count() == 0
    story.boundaries.append(now)


def expect(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.content
    return response.json() if response.content else None


@pytest.fixture
def story(acme: Tenant, globex: Tenant) -> Story:
    """setup | u1 note, u2 note | boundary 0 | u1 export, denied | boundary 1 | u1 update,
    u2 erase. Globex writes alongside, for the same external ids."""
    reader = api_client(make_api_key([acme.namespace], ["memories:read"], name="reader"))
    told = Story()
    told.steps["setup"] = set(
        AuditEvent.objects.filter(namespace_id=acme.namespace.pk).values_list("id", flat=True)
    )
    note: dict[str, str] = {}

    def write(external_id: str) -> None:
        for tenant in (acme, globex):
            body = {"subject": external_id, "content": f"{external_id} likes tea"}
            made = expect(tenant.client.post(tenant.url("memories"), body, format="json"), 201)
            if tenant is acme:
                note[external_id] = made["id"]

    step(told, acme, "u1 note", lambda: write("u1"))
    step(told, acme, "u2 note", lambda: write("u2"))
    boundary(told)
    step(told, acme, "u1 export", lambda: expect(acme.client.get(acme.url("subjects/u1/export"))))
    step(
        told,
        acme,
        "denied",
        lambda: expect(
            reader.post(acme.url("memories"), {"subject": "u1", "content": "x"}, format="json"),
            403,
        ),
    )
    boundary(told)
    step(
        told,
        acme,
        "u1 update",
        lambda: expect(
            acme.client.patch(
                acme.url(f"memories/{note['u1']}"), {"content": "u1 likes green tea"}, format="json"
            )
        ),
    )
    told.subjects = {
        s.external_id: str(s.pk) for s in Subject.objects.filter(namespace=acme.namespace)
    }
    step(told, acme, "u2 erase", lambda: expect(acme.client.post(acme.url("subjects/u2/erase"))))
    return told


def listed(tenant: Tenant, **query: str) -> set[int]:
    body = expect(tenant.client.get(tenant.url("audit"), {**query, "page_size": "200"}))
    assert body["next"] is None
    return {row["id"] for row in body["results"]}


def actions(ids: set[int]) -> set[str]:
    return set(AuditEvent.objects.filter(id__in=ids).values_list("action", flat=True))


@pytest.mark.django_db
def test_without_a_filter_it_lists_every_event_of_the_namespace(acme: Tenant, story: Story) -> None:
    assert listed(acme) == story.everything


@pytest.mark.django_db
def test_the_action_filter_lists_exactly_that_actions_events(acme: Tenant, story: Story) -> None:
    created = listed(acme, action="memory.create")
    assert created == {
        event_id
        for event_id in story.ids("u1 note", "u2 note")
        if AuditEvent.objects.get(pk=event_id).action == "memory.create"
    }
    assert len(created) == 2
    assert listed(acme, action="subject.export") == story.ids("u1 export")
    assert listed(acme, action="subject.erase") == story.ids("u2 erase")


@pytest.mark.django_db
def test_an_action_nobody_took_lists_nothing(acme: Tenant, story: Story) -> None:
    assert listed(acme, action="memory.frobnicate") == set()


@pytest.mark.django_db
def test_the_denied_outcome_lists_exactly_the_refused_request(acme: Tenant, story: Story) -> None:
    denied = listed(acme, outcome="denied")
    assert denied == story.ids("denied")
    assert actions(denied) == {"api.MemoryListView.post"}


@pytest.mark.django_db
def test_the_success_outcome_lists_everything_but_the_refused_request(
    acme: Tenant, story: Story
) -> None:
    assert listed(acme, outcome="success") == story.everything - story.ids("denied")


@pytest.mark.django_db
def test_the_subject_filter_lists_exactly_that_subjects_events(acme: Tenant, story: Story) -> None:
    u1 = listed(acme, subject_id=story.subjects["u1"])
    assert u1 == story.ids("u1 note", "u1 export", "u1 update")
    assert actions(u1) == {"subject.create", "memory.create", "subject.export", "memory.update"}


@pytest.mark.django_db
def test_an_erased_subjects_events_are_still_found_by_its_id(acme: Tenant, story: Story) -> None:
    assert listed(acme, subject_id=story.subjects["u2"]) == story.ids("u2 note", "u2 erase")


@pytest.mark.django_db
def test_since_lists_the_events_from_then_on(acme: Tenant, story: Story) -> None:
    since = story.boundaries[0].isoformat()
    assert listed(acme, since=since) == story.ids("u1 export", "denied", "u1 update", "u2 erase")


@pytest.mark.django_db
def test_until_lists_the_events_before_then(acme: Tenant, story: Story) -> None:
    until = story.boundaries[0].isoformat()
    assert listed(acme, until=until) == story.ids("setup", "u1 note", "u2 note")


@pytest.mark.django_db
def test_since_and_until_together_list_the_window_between(acme: Tenant, story: Story) -> None:
    since, until = (moment.isoformat() for moment in story.boundaries)
    assert listed(acme, since=since, until=until) == story.ids("u1 export", "denied")


@pytest.mark.django_db
def test_the_filters_combine(acme: Tenant, story: Story) -> None:
    u2_created = listed(acme, action="memory.create", subject_id=story.subjects["u2"])
    assert len(u2_created) == 1
    assert u2_created <= story.ids("u2 note")
    late = story.boundaries[1].isoformat()
    assert listed(acme, subject_id=story.subjects["u1"], since=late) == story.ids("u1 update")
    assert listed(acme, outcome="denied", since=late) == set()


class BrokenExtractor:
    name = "broken"

    def extract(self, turns: list) -> list:
        raise RuntimeError("a bug")


@pytest.mark.django_db
def test_a_failed_job_is_listed_under_the_failed_outcome(acme: Tenant, monkeypatch) -> None:
    # An extractor's bug fails the job at once (an LLM's failure would not: the rules step in).
    monkeypatch.setattr("apps.pipeline.jobs.get_extractor", lambda namespace: BrokenExtractor())
    body = {"subject": "u1", "session": "s1", "messages": [{"role": "user", "content": "Hi"}]}
    job = expect(acme.client.post(acme.url("messages"), body, format="json"), 201)
    assert job["status"] == "failed"
    failed = AuditEvent.objects.get(action="job.failed", object_id=job["id"])
    assert listed(acme, outcome="failed") == {failed.pk}
