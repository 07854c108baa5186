"""Chains per namespace: appends in different namespaces do not wait for each other, and an
install with the single chain of old migrates by sealing it, verifiable end to end."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from apps.audit import chain
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, ChainHead
from apps.audit.services import audit_record, chain_verification_run
from apps.namespaces.models import Namespace

ACTOR = Actor.system("tests")


@pytest.fixture
def two(transactional_db: None) -> tuple[Namespace, Namespace]:
    return (
        Namespace.objects.create(slug="north", name="North"),
        Namespace.objects.create(slug="south", name="South"),
    )


def _append_within(namespace: Namespace | None, timeout_ms: int) -> AuditEvent:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = {int(timeout_ms)}")
        return audit_record(actor=ACTOR, action="test.event", namespace=namespace)


@contextmanager
def an_append_held_open(namespace: Namespace) -> Iterator[None]:
    """An append to `namespace`'s chain in another connection, its transaction open until
    the block ends (then committed); an error in that thread fails the test."""
    holding, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def hold_open() -> None:
        try:
            with transaction.atomic():
                audit_record(actor=ACTOR, action="test.held", namespace=namespace)
                holding.set()
                release.wait(30)
        except BaseException as error:
            errors.append(error)
        finally:
            holding.set()
            connection.close()

    holder = threading.Thread(target=hold_open)
    holder.start()
    try:
        assert holding.wait(30)
        yield
    finally:
        release.set()
        holder.join(60)
    assert errors == []


def test_an_open_append_holds_back_its_own_chain_only(two: tuple[Namespace, Namespace]) -> None:
    north, south = two
    with an_append_held_open(north):
        # Another namespace's chain and the global one: no wait (a wait would time out).
        assert _append_within(south, 10_000).chain == south.pk
        assert _append_within(None, 10_000).chain == chain.GLOBAL_CHAIN
        # The same namespace's chain waits for the open append until it commits.
        with pytest.raises(OperationalError, match="lock timeout"):
            _append_within(north, 200)
    after = _append_within(north, 10_000)
    held = AuditEvent.objects.get(action="test.held")
    assert (after.prev_hash, after.pk > held.pk) == (held.hash, True)


# --- Migrating the single chain of an older install -------------------------------------------

BEFORE = [("audit", "0006_read_subjects_index")]


def _old_append(cursor: object, n: int, previous: str, namespace: Namespace | None) -> str:
    """An event as the single chain appended it: the id and previous hash from the one head."""
    event = {
        "id": n,
        "created_at": timezone.now().isoformat(timespec="microseconds"),
        "actor_type": "system",
        "actor_id": "",
        "actor_name": "tests",
        "action": "test.old",
        "namespace_id": namespace.pk if namespace else None,
        "namespace_slug": namespace.slug if namespace else "",
        "subject_id": None,
        "object_type": "",
        "object_id": str(n),
        "request_id": "",
        "ip": None,
        "outcome": "success",
        "details": {"n": n},
        "prev_hash": previous,
    }
    event["hash"] = chain.link_hash(event)
    columns = list(event)
    values = [json.dumps(v) if k == "details" else v for k, v in event.items()]
    cursor.execute(  # type: ignore[attr-defined]
        f"INSERT INTO audit_auditevent ({', '.join(columns)}) "  # noqa: S608
        f"VALUES ({', '.join(['%s'] * len(columns))})",
        values,
    )
    return str(event["hash"])


def _verify(*args: str) -> str:
    out = io.StringIO()
    call_command("audit_verify", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_an_older_install_is_sealed_and_every_new_chain_continues_from_the_seal() -> None:
    north = Namespace.objects.create(slug="north", name="North")
    MigrationExecutor(connection).migrate(BEFORE)
    previous = chain.GENESIS
    with connection.cursor() as cursor:
        for n in range(1, 6):
            previous = _old_append(cursor, n, previous, north if n % 2 else None)
        cursor.execute(
            "INSERT INTO audit_chainhead (id, last_id, last_hash) VALUES (1, 5, %s)", [previous]
        )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    seal = AuditEvent.objects.get(action=chain.SEAL_ACTION)
    assert (seal.chain, seal.prev_hash, seal.pk) == (chain.SEALED_CHAIN, previous, 6)
    assert seal.details == {"events": 5, "through_event_id": 5}
    assert set(AuditEvent.objects.values_list("chain", flat=True)) == {chain.SEALED_CHAIN}
    head = ChainHead.objects.get()
    assert (head.pk, head.last_id, head.last_hash) == (chain.SEALED_CHAIN, 6, seal.hash)

    south = Namespace.objects.create(slug="south", name="South")
    firsts = [
        audit_record(actor=ACTOR, action="test.new", namespace=namespace)
        for namespace in (north, south, None)
    ]
    assert [event.prev_hash for event in firsts] == [seal.hash] * 3
    assert [event.chain for event in firsts] == [north.pk, south.pk, chain.GLOBAL_CHAIN]
    assert min(event.pk for event in firsts) > seal.pk
    audit_record(actor=ACTOR, action="test.new", namespace=north)

    assert f"Audit chains intact: {AuditEvent.objects.count()} events verified." in _verify()
    assert "Audit chain intact: 2 events verified." in _verify("--namespace", "north")
    assert chain_verification_run(requested_by="tests").status == "succeeded"

    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute("UPDATE audit_auditevent SET object_id = 'x' WHERE id = 3")
        cursor.execute("SET session_replication_role = origin")
    with pytest.raises(CommandError, match=r"broken at event 3 \(the sealed chain\): hash"):
        _verify()
    broken = chain_verification_run(requested_by="tests", full=True)
    assert (broken.status, broken.broken_event_id) == ("broken", 3)
    assert broken.broken_chain == chain.SEALED_CHAIN


def test_an_incremental_walk_carries_each_chain_on_and_finds_a_break_in_one(
    two: tuple[Namespace, Namespace],
) -> None:
    north, south = two
    for namespace in (north, south, None, north):
        audit_record(actor=ACTOR, action="test.event", namespace=namespace)
    assert chain_verification_run(requested_by="tests", full=True).status == "succeeded"
    later = [
        audit_record(actor=ACTOR, action="test.event", namespace=namespace)
        for namespace in (south, north, south)
    ]
    incremental = chain_verification_run(requested_by="tests")
    assert (incremental.status, incremental.full) == ("succeeded", False)
    assert (
        incremental.checked == AuditEvent.objects.filter(id__gt=incremental.from_event_id).count()
    )
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute("DELETE FROM audit_auditevent WHERE id = %s", [later[0].pk])
        cursor.execute("SET session_replication_role = origin")
    audit_record(actor=ACTOR, action="test.event", namespace=north)
    broken = chain_verification_run(requested_by="tests", full=True)
    assert (broken.status, broken.broken_event_id) == ("broken", later[2].pk)
    assert broken.broken_chain == south.pk


def test_a_walk_waits_for_an_open_append_with_a_lower_id(two: tuple[Namespace, Namespace]) -> None:
    """Ids come from one sequence, so north's open append may commit after south's higher
    id: a walk that ended at south's event would never check north's."""
    from apps.audit.services import chain_settled_newest

    north, south = two
    with an_append_held_open(north):
        higher = _append_within(south, 10_000)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = 200")
            with pytest.raises(OperationalError, match="lock timeout"):
                chain_settled_newest()
    held = AuditEvent.objects.get(action="test.held")
    assert held.pk < higher.pk <= chain_settled_newest()
