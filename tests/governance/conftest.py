"""The dashboard's cast: in namespace acme, Olive owns, Eddie edits, Vera views; Oscar is a
member of globex only and must see nothing of acme. Acme has a subject with a conversation,
an edited fact with a supersede, a pending memory and a PII-tagged one."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.audit.actors import Actor
from apps.governance.services import purge_start
from apps.memories.models import Memory, Status
from apps.memories.services import NewMemory, memories_create_bulk, memory_create, memory_update
from apps.namespaces.models import Namespace
from apps.namespaces.services import membership_set, namespace_create
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.models import Job
from apps.recall.models import RecallLog
from apps.recall.services import NewRecallLog, recall_log_create


@dataclass
class Cast:
    acme: Namespace
    globex: Namespace
    users: dict[str, User]
    fact: Memory  # edited once: two versions
    old_fact: Memory  # superseded by `fact`
    pending: Memory
    pii: Memory
    shared: Memory
    turn: Memory  # an episodic memory from the conversation
    other_tenant_memory: Memory
    subject_id: str
    job: Job  # a purge job (queued: nothing runs it in a test's transaction)
    recall: RecallLog  # a recall that served `fact`

    def client(self, name: str) -> Client:
        client = Client()
        client.force_login(self.users[name])
        return client


def build_cast(*, password: str | None = None) -> Cast:
    """The cast's rows. Without a password (force_login) users cost nothing to create;
    hashing one costs ~0.3 s. Browser tests, which log in through the form, give one."""
    actor = Actor.system("tests")
    acme = namespace_create(actor=actor, slug="acme", name="Acme")
    globex = namespace_create(actor=actor, slug="globex", name="Globex")
    users = {
        name: User.objects.create_user(name, f"{name}@example.com", password)
        for name in ("olive", "eddie", "vera", "oscar")
    }
    for name, role in (("olive", "owner"), ("eddie", "editor"), ("vera", "viewer")):
        membership_set(actor=actor, namespace=acme, user=users[name], role=role)
    membership_set(actor=actor, namespace=globex, user=users["oscar"], role="owner")

    messages_ingest(
        actor=actor,
        namespace=acme,
        subject_external_id="u1",
        session_external_id="s1",
        messages=[
            IncomingMessage("user", "Hi, I'm Mei Lin. I live in Hangzhou."),
            IncomingMessage("assistant", "Nice to meet you, Mei!"),
            IncomingMessage("user", "I moved to Shanghai last week."),
        ],
    )
    turn = Memory.objects.filter(namespace=acme, kind="episodic").order_by("position").first()
    assert turn is not None
    old_fact = memory_create(
        actor=actor,
        namespace=acme,
        item=NewMemory(subject_external_id="u1", content="The user likes tea."),
    )
    fact = memory_create(
        actor=actor,
        namespace=acme,
        item=NewMemory(subject_external_id="u1", content="The user likes green tea."),
    )
    Memory.objects.filter(pk=old_fact.pk).update(valid_to=fact.created_at, superseded_by=fact)
    Memory.objects.filter(pk=fact.pk).update(metadata={"supersedes": [str(old_fact.pk)]})
    fact.refresh_from_db()
    fact = memory_update(
        actor=actor, memory=fact, content="The user likes jasmine green tea.", reason="typo"
    )
    pending, pii_memory = memories_create_bulk(
        actor=actor,
        namespace=acme,
        items=[
            NewMemory(
                content="The user might be allergic to cats.",
                subject_external_id="u1",
                status=Status.PENDING_REVIEW,
                confidence=0.4,
            ),
            NewMemory(
                content="Email me at mei@example.com", subject_external_id="u1", tags=["pii:email"]
            ),
        ],
    )
    shared = memory_create(
        actor=actor,
        namespace=acme,
        item=NewMemory(subject_external_id=None, content="Answer in English."),
    )
    job = purge_start(
        actor=actor, namespace=acme, filters={"tag": "none-such"}, reason="tests",
        confirmation="acme", expected=0,
    )  # fmt: skip
    other = memory_create(
        actor=actor,
        namespace=globex,
        item=NewMemory(subject_external_id="g1", content="Globex secret plan."),
    )
    recall = recall_log_create(
        actor=actor,
        namespace=acme,
        entry=NewRecallLog(subject=fact.subject, memory_ids=[fact.pk], purpose="recall"),
    )
    return Cast(
        acme=acme,
        globex=globex,
        users=users,
        fact=fact,
        old_fact=old_fact,
        pending=pending,
        pii=pii_memory,
        shared=shared,
        turn=turn,
        other_tenant_memory=other,
        subject_id=str(turn.subject_id),
        job=job,
        recall=recall,
    )


@pytest.fixture
def cast(db: None) -> Cast:
    return build_cast()
