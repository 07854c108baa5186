"""The portal's cast: acme (and globex) with an app key, a subject with memories of each
kind, a superseded fact, a recall, a PII finding; and a helper that opens the portal as the
person would (the app asks for a link, the browser follows it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from apps.audit.actors import Actor
from apps.memories.models import Memory, Subject
from apps.memories.services import NewMemory, memory_create
from apps.namespaces.services import namespace_update
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from tests.conftest import Tenant, api_client, make_api_key

PORTAL_ONLY = ["subjects:portal"]


@dataclass
class Portal:
    client: Client
    subject: Subject
    landing: str  # where the link led

    def url(self, path: str = "") -> str:
        return f"/portal/{self.subject.pk}/{path}"


def link_for(tenant: Tenant, external_id: str, **body: Any) -> dict[str, Any]:
    response = tenant.client.post(
        tenant.url(f"subjects/{external_id}/portal-sessions"), body, format="json"
    )
    assert response.status_code == 201, response.json()
    return response.json()


def open_portal(tenant: Tenant, external_id: str = "u1", **body: Any) -> Portal:
    link = link_for(tenant, external_id, **body)
    client = Client()
    response = client.get(link["url"])
    assert response.status_code == 303, response.content[:500]
    subject = Subject.objects.get(namespace=tenant.namespace, external_id=external_id)
    return Portal(client=client, subject=subject, landing=response["Location"])


@dataclass
class Story:
    fact: Memory  # a current fact
    old: Memory  # a fact superseded by `fact`
    rule: Memory  # a procedural memory
    other: Memory  # a memory of another subject of the same namespace


def tell(tenant: Tenant, external_id: str, *turns: str, session: str = "s1") -> None:
    messages_ingest(
        actor=Actor.system("tests"),
        namespace=tenant.namespace,
        subject_external_id=external_id,
        session_external_id=session,
        messages=[IncomingMessage("user", turn) for turn in turns],
    )


@pytest.fixture
def story(acme: Tenant, django_capture_on_commit_callbacks) -> Story:
    actor = Actor.system("tests")
    with django_capture_on_commit_callbacks(execute=True):
        tell(acme, "u1", "I live in Hangzhou.")
        tell(acme, "u1", "I moved to Shanghai last week.", session="s2")
    fact = Memory.objects.get(
        namespace=acme.namespace, subject__external_id="u1", kind="semantic", valid_to=None
    )
    old = Memory.objects.get(
        namespace=acme.namespace,
        subject__external_id="u1",
        kind="semantic",
        valid_to__isnull=False,
    )
    rule = memory_create(
        actor=actor,
        namespace=acme.namespace,
        item=NewMemory(
            subject_external_id="u1", kind="procedural", content="Answer in short bullet points."
        ),
    )
    other = memory_create(
        actor=actor,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u2", content="The user keeps bees."),
    )
    recalled = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "where do I live"}, format="json"
    )
    assert recalled.status_code == 200
    return Story(fact=fact, old=old, rule=rule, other=other)


@pytest.fixture
def portal_key(acme: Tenant) -> Tenant:
    """acme's namespace with a key that may only open the portal."""
    raw = make_api_key([acme.namespace], PORTAL_ONLY, name="support desk")
    return Tenant(namespace=acme.namespace, raw_key=raw, client=api_client(raw))


def allow_return(tenant: Tenant, *origins: str) -> None:
    namespace_update(
        actor=Actor.system("tests"), namespace=tenant.namespace, portal_return_origins=list(origins)
    )
    tenant.namespace.refresh_from_db()
