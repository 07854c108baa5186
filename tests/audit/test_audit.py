"""The audit log: one event per service call, no memory text, append-only, tamper-evident."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.forms.models import model_to_dict

from apps.accounts.models import ApiKey
from apps.accounts.services import api_key_create, api_key_revoke
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.audit.services import audit_record
from apps.memories.models import Memory, Subject
from apps.memories.services import (
    NewMemory,
    data_keys_rotate,
    memories_create_bulk,
    memories_reembed,
    memory_archive,
    memory_create,
    memory_delete,
    memory_update,
    subject_erase,
    subject_export,
    subject_get_or_create,
    subject_set_paused,
)
from apps.namespaces.models import Namespace
from apps.namespaces.services import (
    membership_remove,
    membership_set,
    namespace_create,
    namespace_delete,
    namespace_update,
)
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


@dataclass
class World:
    namespace: Namespace
    user: User
    api_key: ApiKey
    subject: Subject
    memory: Memory


@pytest.fixture
def world(acme: Tenant) -> World:
    user = User.objects.create_user("bob")  # no password: no slow hashing
    membership_set(actor=ACTOR, namespace=acme.namespace, user=user, role="viewer")
    api_key, _ = api_key_create(
        actor=ACTOR, name="k", namespaces=[acme.namespace], permissions=["memories:read"]
    )
    subject = subject_get_or_create(actor=ACTOR, namespace=acme.namespace, external_id="s-1")
    memory = memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="s-1", content="first"),
    )
    return World(acme.namespace, user, api_key, subject, memory)


def new_events(since: int) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(id__gt=since).order_by("id"))


def last_event_id() -> int:
    return AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0


# --- (a) One event per service call -----------------------------------------------------------

SERVICE_CALLS: dict[str, tuple[str, Callable[[World], Any]]] = {
    "namespace_create": (
        "namespace.create",
        lambda w: namespace_create(actor=ACTOR, slug="initech"),
    ),
    "namespace_update": (
        "namespace.update",
        lambda w: namespace_update(actor=ACTOR, namespace=w.namespace, name="Acme Corp"),
    ),
    "membership_set": (
        "membership.set",
        lambda w: membership_set(actor=ACTOR, namespace=w.namespace, user=w.user, role="editor"),
    ),
    "membership_remove": (
        "membership.remove",
        lambda w: membership_remove(actor=ACTOR, namespace=w.namespace, user=w.user),
    ),
    "api_key_create": (
        "api_key.create",
        lambda w: api_key_create(
            actor=ACTOR, name="new", namespaces=[w.namespace], permissions=["context"]
        ),
    ),
    "api_key_revoke": (
        "api_key.revoke",
        lambda w: api_key_revoke(actor=ACTOR, api_key=w.api_key),
    ),
    "subject_get_or_create": (
        "subject.create",
        lambda w: subject_get_or_create(actor=ACTOR, namespace=w.namespace, external_id="s-2"),
    ),
    "subject_set_paused": (
        "subject.pause",
        lambda w: subject_set_paused(actor=ACTOR, subject=w.subject, paused=True),
    ),
    "subject_set_paused_false": (
        "subject.resume",
        lambda w: subject_set_paused(actor=ACTOR, subject=w.subject, paused=False),
    ),
    "memory_create": (
        "memory.create",
        lambda w: memory_create(
            actor=ACTOR,
            namespace=w.namespace,
            item=NewMemory(subject_external_id="s-1", content="second"),
        ),
    ),
    "memory_update": (
        "memory.update",
        lambda w: memory_update(actor=ACTOR, memory=w.memory, content="first, revised"),
    ),
    "memory_archive": ("memory.archive", lambda w: memory_archive(actor=ACTOR, memory=w.memory)),
    "memory_delete": ("memory.delete", lambda w: memory_delete(actor=ACTOR, memory=w.memory)),
    "subject_export": ("subject.export", lambda w: subject_export(actor=ACTOR, subject=w.subject)),
    "subject_erase": (
        "subject.erase",
        lambda w: subject_erase(actor=ACTOR, subject=w.subject, via="api"),
    ),
    "data_keys_rotate": ("keys.rotate", lambda w: data_keys_rotate(actor=ACTOR)),
    "memories_create_bulk": (
        "memory.create_bulk",
        lambda w: memories_create_bulk(
            actor=ACTOR,
            namespace=w.namespace,
            items=[NewMemory(content="a", subject_external_id="s-1"), NewMemory(content="b")],
        ),
    ),
    "memories_reembed": ("memory.reembed", lambda w: memories_reembed(actor=ACTOR)),
    "namespace_delete": (
        "namespace.delete",
        lambda w: namespace_delete(actor=ACTOR, namespace=w.namespace),
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("service", sorted(SERVICE_CALLS))
def test_every_service_writes_exactly_one_audit_event_with_its_action(
    world: World, service: str
) -> None:
    action, call = SERVICE_CALLS[service]
    since = last_event_id()
    call(world)
    events = new_events(since)
    assert [event.action for event in events] == [action]
    assert events[0].outcome == "success"
    assert events[0].actor_type == "system"


@pytest.mark.django_db
def test_memory_create_for_a_new_subject_also_records_the_subject_creation(world: World) -> None:
    since = last_event_id()
    memory_create(
        actor=ACTOR,
        namespace=world.namespace,
        item=NewMemory(subject_external_id="s-3", content="x"),
    )
    assert [event.action for event in new_events(since)] == ["subject.create", "memory.create"]


@pytest.mark.django_db
def test_getting_an_existing_subject_writes_no_audit_event(world: World) -> None:
    since = last_event_id()
    subject_get_or_create(actor=ACTOR, namespace=world.namespace, external_id="s-1")
    assert new_events(since) == []


# --- (b) No memory text in the log ------------------------------------------------------------


def audit_rows_containing(needle: str) -> list[str]:
    return [
        f"#{event.pk} {event.action}"
        for event in AuditEvent.objects.all()
        if needle in json.dumps(model_to_dict(event), default=str)
    ]


@pytest.mark.django_db
def test_the_audit_scan_finds_text_placed_in_an_event(world: World) -> None:
    planted = uuid.uuid4().hex
    audit_record(actor=ACTOR, action="test.plant", details={"note": f"x {planted} y"})
    assert len(audit_rows_containing(planted)) == 1


@pytest.mark.django_db
def test_no_audit_event_contains_memory_text(acme: Tenant) -> None:
    canaries = [uuid.uuid4().hex for _ in range(4)]
    memory = memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="s-1", content=canaries[0]),
    )
    memory_update(actor=ACTOR, memory=memory, content=f"now {canaries[1]}")
    response = acme.client.post(
        acme.url("memories"), {"subject": "s-1", "content": canaries[2]}, format="json"
    )
    assert response.status_code == 201
    response = acme.client.patch(
        acme.url(f"memories/{response.json()['id']}"), {"content": canaries[3]}, format="json"
    )
    assert response.status_code == 200
    exported = acme.client.get(acme.url("subjects/s-1/export"))
    assert exported.status_code == 200
    assert all(canary in json.dumps(exported.json()) for canary in canaries)
    subject = Subject.objects.get(namespace=acme.namespace, external_id="s-1")
    subject_export(actor=ACTOR, subject=subject)
    assert acme.client.post(acme.url("subjects/s-1/erase")).status_code == 200

    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"memory.create", "memory.update", "subject.export", "subject.erase"} <= actions
    for canary in canaries:
        assert audit_rows_containing(canary) == [], canary


# --- (c) Append-only, enforced by the database --------------------------------------------------


def orm_queryset_update(event: AuditEvent) -> None:
    AuditEvent.objects.filter(pk=event.pk).update(action="tampered")


def orm_instance_save(event: AuditEvent) -> None:
    event.action = "tampered"
    event.save()


def orm_queryset_delete(event: AuditEvent) -> None:
    AuditEvent.objects.filter(pk=event.pk).delete()


def orm_instance_delete(event: AuditEvent) -> None:
    event.delete()


def raw_update(event: AuditEvent) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE audit_auditevent SET action = 'tampered' WHERE id = %s", [event.pk])


def raw_delete(event: AuditEvent) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE id = %s", [event.pk])


def raw_update_all(event: AuditEvent) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE audit_auditevent SET details = '{}'::jsonb")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        orm_queryset_update,
        orm_instance_save,
        orm_queryset_delete,
        orm_instance_delete,
        raw_update,
        raw_delete,
        raw_update_all,
    ],
    ids=lambda change: change.__name__,
)
def test_the_database_refuses_to_change_or_remove_an_audit_event(
    change: Callable[[AuditEvent], None],
) -> None:
    event = audit_record(actor=ACTOR, action="test.event", details={"n": 1})
    before = model_to_dict(AuditEvent.objects.get(pk=event.pk))
    count = AuditEvent.objects.count()
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        change(event)
    assert AuditEvent.objects.count() == count
    assert model_to_dict(AuditEvent.objects.get(pk=event.pk)) == before


# --- (d) Tampering is detected by audit_verify ----------------------------------------------------


@contextmanager
def bypassing_triggers() -> Iterator[Any]:
    """As the database superuser, with triggers off (as a DBA with full access could)."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            yield cursor
        finally:
            cursor.execute("SET session_replication_role = origin")


@pytest.fixture(params=["global", "namespace"])
def chain(request: pytest.FixtureRequest, db: None) -> list[AuditEvent]:
    """Six events of one chain (the global one, or a namespace's), with events of the other
    chains appended between them, so that a walk must keep the chains apart."""
    here = Namespace.objects.create(slug="here", name="Here")
    other = Namespace.objects.create(slug="other", name="Other")
    namespace = here if request.param == "namespace" else None
    events = []
    for n in range(6):
        events.append(
            audit_record(
                actor=ACTOR,
                action="test.event",
                namespace=namespace,
                object_id=str(n),
                details={"n": n},
            )
        )
        audit_record(actor=ACTOR, action="test.between", namespace=other)
        if namespace is not None:
            audit_record(actor=ACTOR, action="test.between")
    return events


def verify(*args: str) -> str:
    out = io.StringIO()
    call_command("audit_verify", *args, stdout=out)
    return out.getvalue()


def test_audit_verify_reports_intact_chains_with_their_count(chain: list[AuditEvent]) -> None:
    output = verify()
    assert f"Audit chains intact: {AuditEvent.objects.count()} events verified." in output
    assert f"event {chain[-1].pk} hash {chain[-1].hash}" in output


def test_audit_verify_verifies_one_chain_on_its_own(chain: list[AuditEvent]) -> None:
    which = ["--namespace", "here"] if chain[0].namespace_id else ["--global"]
    output = verify(*which)
    assert f"Audit chain intact: {len(chain)} events verified." in output
    assert output.count("Head of") == 1


def test_audit_verify_names_an_edited_event(chain: list[AuditEvent]) -> None:
    target = chain[2]
    with bypassing_triggers() as cursor:
        cursor.execute(
            "UPDATE audit_auditevent SET details = '{\"n\": 99}'::jsonb WHERE id = %s", [target.pk]
        )
    with pytest.raises(CommandError, match=rf"broken at event {target.pk} .*: hash does not match"):
        verify()
    (recorded,) = AuditEvent.objects.filter(action="audit.chain_broken")
    assert recorded.details["broken_event_id"] == target.pk  # what the webhooks hear of


def test_audit_verify_names_the_event_after_a_deleted_one(chain: list[AuditEvent]) -> None:
    with bypassing_triggers() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE id = %s", [chain[3].pk])
    assert not AuditEvent.objects.filter(pk=chain[3].pk).exists()
    with pytest.raises(CommandError, match=rf"broken at event {chain[4].pk} .*: prev_hash"):
        verify()


def test_audit_verify_names_the_first_of_two_swapped_events(chain: list[AuditEvent]) -> None:
    first, second = chain[2], chain[3]
    quote = connection.ops.quote_name
    swapped = [
        field.column
        for field in AuditEvent._meta.concrete_fields
        if field.column not in {"id", "hash"}
    ]
    assignments = ", ".join(f"{quote(column)} = other.{quote(column)}" for column in swapped)
    with bypassing_triggers() as cursor:
        # Every column but the id moves to the other row; hash is unique, so it moves last.
        cursor.execute(
            f"UPDATE audit_auditevent AS row SET {assignments} "  # noqa: S608
            "FROM audit_auditevent AS other "
            "WHERE (row.id, other.id) IN ((%s, %s), (%s, %s))",
            [first.pk, second.pk, second.pk, first.pk],
        )
        set_hash = "UPDATE audit_auditevent SET hash = %s WHERE id = %s"
        cursor.execute(set_hash, ["swapping", first.pk])
        cursor.execute(set_hash, [first.hash, second.pk])
        cursor.execute(set_hash, [second.hash, first.pk])
    moved = AuditEvent.objects.get(pk=first.pk)
    assert (moved.object_id, moved.hash) == (second.object_id, second.hash)
    with pytest.raises(CommandError, match=rf"broken at event {first.pk} "):
        verify()


def test_audit_verify_notices_events_cut_off_the_end_of_a_chain(chain: list[AuditEvent]) -> None:
    with bypassing_triggers() as cursor:
        cursor.execute(
            "DELETE FROM audit_auditevent WHERE chain = %s AND id >= %s",
            [chain[0].chain, chain[4].pk],
        )
    with pytest.raises(CommandError, match=rf"broken at event {chain[-1].pk} .*: the chain head"):
        verify()


def test_audit_verify_notices_an_event_moved_to_another_chain(chain: list[AuditEvent]) -> None:
    """The chain column is not hashed (the sealed chain predates it): the walk checks it
    against the namespace id, which is."""
    with bypassing_triggers() as cursor:
        cursor.execute("UPDATE audit_auditevent SET chain = 424242 WHERE id = %s", [chain[5].pk])
    with pytest.raises(CommandError, match=rf"broken at event {chain[5].pk} .*: the event is not"):
        verify()


def test_appends_continue_each_chain_from_its_own_head(chain: list[AuditEvent]) -> None:
    namespace = Namespace.objects.get(slug="here") if chain[0].namespace_id else None
    audit_record(actor=ACTOR, action="test.between", namespace=Namespace.objects.get(slug="other"))
    event = audit_record(actor=ACTOR, action="test.event", namespace=namespace)
    assert event.pk > chain[-1].pk
    assert event.prev_hash == chain[-1].hash
    assert event.chain == (namespace.pk if namespace else 0)
    assert AuditEvent.objects.get(pk=event.pk).hash == event.hash


def test_a_new_chain_starts_at_the_genesis_on_an_install_that_sealed_nothing(db: None) -> None:
    namespace = Namespace.objects.create(slug="fresh", name="Fresh")
    first = audit_record(actor=ACTOR, action="test.event", namespace=namespace)
    assert (first.chain, first.prev_hash) == (namespace.pk, "0" * 64)
