"""`manage.py erase_subject --namespace SLUG EXTERNAL_ID`: erases the subject (its key, memories
and versions), leaves everyone else's rows, prints the receipt and audits it once; refuses an
unknown namespace or subject without changing anything."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.models import DataKey, Memory, MemoryVersion, Subject
from apps.memories.services import NewMemory, memory_create, memory_update
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


@pytest.fixture
def people(acme: Tenant, globex: Tenant) -> None:
    """u1 in acme (two memories, one of them edited once), u2 in acme, u1 in globex."""
    first = memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u1", content="Likes tea"),
    )
    memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u1", content="Lives in Lyon"),
    )
    memory_update(actor=ACTOR, memory=first, content="Likes green tea")
    memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u2", content="Likes coffee"),
    )
    memory_create(
        actor=ACTOR,
        namespace=globex.namespace,
        item=NewMemory(subject_external_id="u1", content="Likes cocoa"),
    )


def erase(*args: str) -> str:
    out = io.StringIO()
    call_command("erase_subject", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
@pytest.mark.usefixtures("people")
def test_it_erases_the_subject_and_prints_its_receipt(acme: Tenant) -> None:
    u1 = Subject.objects.get(namespace=acme.namespace, external_id="u1")
    receipt = json.loads(erase("u1", "--namespace", "acme"))
    assert receipt["subject_id"] == str(u1.pk)
    assert receipt["memories_deleted"] == 2
    assert receipt["versions_deleted"] == 3
    assert receipt["data_keys_destroyed"] == 1
    assert not Subject.objects.filter(pk=u1.pk).exists()
    assert not Memory.objects.filter(subject_id=u1.pk).exists()
    assert not MemoryVersion.objects.filter(memory__subject_id=u1.pk).exists()
    assert not DataKey.objects.filter(subject_id=u1.pk).exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("people")
def test_it_leaves_the_other_subjects_and_the_same_id_in_another_namespace(
    acme: Tenant, globex: Tenant
) -> None:
    erase("u1", "--namespace", "acme")
    assert Memory.objects.filter(namespace=acme.namespace, subject__external_id="u2").count() == 1
    assert Memory.objects.filter(namespace=globex.namespace, subject__external_id="u1").count() == 1


@pytest.mark.django_db
@pytest.mark.usefixtures("people")
def test_it_writes_one_subject_erase_event_by_the_command(acme: Tenant) -> None:
    receipt = json.loads(erase("u1", "--namespace", "acme"))
    event = AuditEvent.objects.get(action="subject.erase")
    assert event.pk == receipt["audit_event_id"]
    assert event.actor_type == "system"
    assert event.actor_name == "manage.py erase_subject"
    assert event.namespace_id == acme.namespace.pk
    assert str(event.subject_id) == receipt["subject_id"]
    assert event.details["receipt_hash"] == receipt["receipt_hash"]
    assert "u1" not in json.dumps(event.details)  # only a keyed fingerprint of the id


@pytest.mark.django_db
@pytest.mark.usefixtures("people")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["u1", "--namespace", "initech"], "No such namespace: initech"),
        (["nobody", "--namespace", "acme"], "No such subject in that namespace."),
    ],
    ids=["unknown-namespace", "unknown-subject"],
)
def test_it_refuses_an_unknown_target_and_changes_nothing(args: list[str], message: str) -> None:
    memories, events = Memory.objects.count(), AuditEvent.objects.count()
    with pytest.raises(CommandError, match=message):
        erase(*args)
    assert Memory.objects.count() == memories
    assert AuditEvent.objects.count() == events
