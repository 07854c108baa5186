"""The portal's "Who used them" page: an administrator's dashboard views grouped by day (one
entry per administrator and day, with how many times and which pages), every entry listing
only the memories that access used, and pages of entries that never split a day."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from apps.audit.actors import Actor
from apps.governance.services import content_read_record
from apps.privacy.selectors import activity
from apps.recall.models import RecallLog
from tests.conftest import Tenant
from tests.privacy.conftest import Story, open_portal

pytestmark = pytest.mark.django_db

ENTRY = re.compile(r'<li class="card (viewed|served)">(.*?)</li>\s*(?=<li class="card|</ol>)', re.S)


@contextmanager
def at(moment: datetime) -> Iterator[None]:
    """Audit events written meanwhile carry this time."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("apps.audit.services.timezone.now", lambda: moment)
        yield


def noon(days_ago: int) -> datetime:
    """Midday `days_ago` days back: events an hour either side of it fall on the same day
    whenever the test runs, near midnight too."""
    moment = timezone.now() - timedelta(days=days_ago)
    return moment.replace(hour=12, minute=0, second=0, microsecond=0)


def view(user: User, tenant: Tenant, page: str, *memories) -> None:
    content_read_record(
        actor=Actor.for_user(user),
        namespace=tenant.namespace,
        what=page,
        memory_ids=[m.pk for m in memories],
    )


def entries(html: str) -> list[tuple[str, str]]:
    return ENTRY.findall(html)


@pytest.fixture
def bob(db: None) -> User:
    return User.objects.create_user("bob", "bob@example.com", "x")


def test_it_groups_an_administrators_views_of_a_day_into_one_entry(
    acme: Tenant, story: Story, alice: User, bob: User
) -> None:
    with at(noon(days_ago=2)):
        view(alice, acme, "memory", story.rule)
    with at(noon(days_ago=1)):
        for _ in range(5):
            view(alice, acme, "memory", story.fact)
        view(alice, acme, "list", story.fact, story.rule, story.other)
        view(bob, acme, "memory", story.rule)
    portal = open_portal(acme)
    found = entries(portal.client.get(portal.url("activity/")).content.decode())
    viewed = [body for kind, body in found if kind == "viewed"]
    assert len(viewed) == 3  # alice and bob on one day, alice on the day before
    alice_day = next(b for b in viewed if "alice" in b and "6 times" in b)
    assert "a memory&#x27;s page × 5" in alice_day
    assert "the list of memories" in alice_day
    assert alice_day.count("The user lives in Shanghai") == 1  # listed once, not six times
    assert "The user keeps bees." not in alice_day  # another person's, on the same list
    assert sum("bob" in b for b in viewed) == 1
    assert sum("1 time" in b for b in viewed) == 2


def test_each_entry_lists_only_what_that_access_used(
    acme: Tenant, story: Story, alice: User
) -> None:
    RecallLog.objects.create(
        namespace=acme.namespace,
        subject=story.fact.subject,
        purpose="context",
        actor_type="api_key",
        memory_ids=[story.fact.pk, story.other.pk],
    )
    view(alice, acme, "memory", story.rule)
    portal = open_portal(acme)
    found = entries(portal.client.get(portal.url("activity/")).content.decode())
    (served,) = [body for kind, body in found if "to build the context" in body]
    (viewed,) = [body for kind, body in found if kind == "viewed"]
    assert "The user lives in Shanghai" in served
    assert "Answer in short bullet points." not in served
    assert "Answer in short bullet points." in viewed
    assert "The user lives in Shanghai" not in viewed
    assert "The user keeps bees." not in served  # another person's, in the same context


def test_an_entry_lists_a_few_and_counts_the_rest(
    acme: Tenant, story: Story, alice: User, monkeypatch
) -> None:
    monkeypatch.setattr(activity, "LISTED", 1)
    view(alice, acme, "list", story.fact, story.rule)
    portal = open_portal(acme)
    html = portal.client.get(portal.url("activity/")).content.decode()
    (viewed,) = [body for kind, body in entries(html) if kind == "viewed"]
    assert "and 1 more memory" in viewed


def test_pages_of_entries_never_split_a_day_nor_repeat_one(
    acme: Tenant, story: Story, alice: User, monkeypatch
) -> None:
    monkeypatch.setattr(activity, "HISTORY_PAGE", 2)
    now = noon(days_ago=0)
    for days in (3, 2, 1):
        with at(now - timedelta(days=days)):
            view(alice, acme, "memory", story.fact)
            view(alice, acme, "memory", story.rule)
    RecallLog.objects.create(
        namespace=acme.namespace,
        subject=story.fact.subject,
        purpose="recall",
        actor_type="api_key",
        memory_ids=[story.rule.pk],
        created_at=now - timedelta(days=2, hours=-1),
    )
    portal = open_portal(acme)
    seen: list[str] = []
    url = portal.url("activity/")
    for _ in range(5):
        html = portal.client.get(url).content.decode()
        seen += [body for _kind, body in entries(html)]
        older = re.search(r'<a href="(\?before=[^"]+)">Older</a>', html)
        if not older:
            break
        url = portal.url("activity/") + older.group(1).replace("&amp;", "&")
    # The story's recall, this recall, and three days of alice's views: each once, whole.
    assert len(seen) == 5
    assert len(set(seen)) == 5
    assert sum("2 times" in body for body in seen) == 3


def test_another_persons_views_are_not_listed(acme: Tenant, story: Story, alice: User) -> None:
    view(alice, acme, "memory", story.other)
    portal = open_portal(acme)
    html = portal.client.get(portal.url("activity/")).content.decode()
    assert not [body for kind, body in entries(html) if kind == "viewed"]
    assert "The user keeps bees." not in html
