"""The audit viewer's cast: Alice administers MemoryHub (superuser); in namespace acme Olive
owns, Eddie edits, Vera views; Oscar owns globex only. The log holds events of acme, of
globex, and events of no namespace (API keys, logins): Olive must see acme's only, Oscar
globex's only, Eddie and Vera none."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.audit.services import audit_record
from apps.namespaces.models import Namespace
from apps.namespaces.services import membership_set, namespace_create

ACTOR = Actor.system("tests")


@dataclass
class AuditCast:
    acme: Namespace
    globex: Namespace
    users: dict[str, User]
    acme_event: AuditEvent
    globex_event: AuditEvent
    global_event: AuditEvent  # of no namespace

    def client(self, name: str) -> Client:
        client = Client()
        client.force_login(self.users[name])
        return client


def build_audit_cast(*, password: str | None = None) -> AuditCast:
    acme = namespace_create(actor=ACTOR, slug="acme", name="Acme")
    globex = namespace_create(actor=ACTOR, slug="globex", name="Globex")
    users = {
        name: User.objects.create_user(name, f"{name}@example.com", password)
        for name in ("olive", "eddie", "vera", "oscar")
    }
    users["alice"] = User.objects.create_superuser("alice", "alice@example.com", password)
    for name, role in (("olive", "owner"), ("eddie", "editor"), ("vera", "viewer")):
        membership_set(actor=ACTOR, namespace=acme, user=users[name], role=role)
    membership_set(actor=ACTOR, namespace=globex, user=users["oscar"], role="owner")
    acme_event = audit_record(
        actor=ACTOR, action="test.acme", namespace=acme, object_type="memory", object_id="m-1"
    )
    globex_event = audit_record(actor=ACTOR, action="test.globex", namespace=globex)
    global_event = audit_record(actor=ACTOR, action="test.global", details={"n": 1})
    return AuditCast(acme, globex, users, acme_event, globex_event, global_event)


@pytest.fixture
def cast(db: None) -> AuditCast:
    return build_audit_cast()


def streamed(response: Any) -> bytes:
    """The whole body of a streaming response (the export)."""
    assert response.streaming
    return b"".join(response.streaming_content)
