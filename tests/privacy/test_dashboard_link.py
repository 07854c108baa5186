"""The dashboard's "create a portal link" on a subject's page: owners get a one-time link,
shown once, audited as theirs; it opens the portal in the chosen language and task."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.models import Subject
from apps.namespaces.services import membership_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def eddie(db) -> User:
    return User.objects.create_user("eddie", "eddie@example.com")


def test_an_owner_creates_a_link_that_opens_the_portal(acme, story, eddie) -> None:
    membership_set(actor=Actor.system("t"), namespace=acme.namespace, user=eddie, role="owner")
    admin = Client()
    admin.force_login(eddie)
    subject = Subject.objects.get(external_id="u1")
    page = admin.get(f"/n/acme/subjects/{subject.pk}/").content.decode()
    assert "Create a portal link" in page
    response = admin.post(
        f"/n/acme/subjects/{subject.pk}/portal-link/", {"flow": "pause", "locale": "zh-hans"}
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    (url,) = re.findall(
        r'value="(http://testserver/portal/enter/[^"]+)"', response.content.decode()
    )
    event = AuditEvent.objects.get(action="portal.link.create")
    assert (event.actor_type, event.subject_id) == ("user", subject.pk)
    person = Client()
    opened = person.get(url)
    assert opened["Location"] == f"/portal/{subject.pk}/pause/"
    assert '<html lang="zh-hans">' in person.get(opened["Location"]).content.decode()


def test_an_editor_may_not_create_one(acme, story, eddie) -> None:
    """Whoever opens a link can erase the subject: only owners may erase here."""
    membership_set(actor=Actor.system("t"), namespace=acme.namespace, user=eddie, role="editor")
    admin = Client()
    admin.force_login(eddie)
    subject = Subject.objects.get(external_id="u1")
    assert (
        "Create a portal link" not in admin.get(f"/n/acme/subjects/{subject.pk}/").content.decode()
    )
    assert admin.post(f"/n/acme/subjects/{subject.pk}/portal-link/").status_code == 403
    assert not AuditEvent.objects.filter(action="portal.link.create").exists()
