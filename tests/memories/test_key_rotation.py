"""KEK rotation: online re-wrapping while other connections read and write memories."""

from __future__ import annotations

import io
import random
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories import row_encryption
from apps.memories.models import DataKey, Memory, MemoryVersion
from apps.memories.row_encryption import KeyCache, open_memory, open_version
from apps.memories.services import NewMemory, data_keys_rotate, memory_create, memory_update
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create
from tests.conftest import api_client, make_api_key

K1 = bytes(range(32))
K2 = bytes(range(100, 132))
ITERATIONS = 12
SUBJECTS = 6


@dataclass
class Rotation:
    namespace: Namespace
    initial_keys: int
    rewrapped: int = 0
    writes_during_rotation: int = 0
    failures: list[str] = field(default_factory=list)
    written: dict[str, str] = field(default_factory=dict)  # memory id -> content, by writers


def seed(namespace: Namespace) -> dict[str, str]:
    """Two memories per subject (the first one updated once) and a shared one: id -> content."""
    actor = Actor.system("tests")
    contents: dict[str, str] = {}
    for n in range(SUBJECTS):
        for m in range(2):
            memory = memory_create(
                actor=actor,
                namespace=namespace,
                item=NewMemory(
                    subject_external_id=f"seed-{n}", content=f"seed memory {m} of subject {n}"
                ),
            )
            if m == 0:
                memory = memory_update(
                    actor=actor, memory=memory, content=f"seed memory {m} of {n}, revised"
                )
            contents[str(memory.id)] = open_memory(KeyCache(), memory)
    shared = memory_create(
        actor=actor, namespace=namespace, item=NewMemory(content="shared seed memory")
    )
    contents[str(shared.id)] = "shared seed memory"
    return contents


def run_rotation_under_load(
    namespace: Namespace, seeded: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> Rotation:
    """Rotate in this thread while readers (ORM and API) and writers run in three others.

    Every worker finishes its first iteration before the rotation starts. The writer then
    keeps in step with the rotation: after re-wrapping each key (inside its batch
    transaction, rows still locked) the rotation lets the writer write once and waits until
    it has, so exactly one write happens mid-rotation per re-wrapped key. Once the rotation
    is over the writer finishes its iterations freely.
    """
    result = Rotation(namespace=namespace, initial_keys=DataKey.objects.count())
    raw_key = make_api_key([namespace], ["memories:read"], name="rotation reader")
    seeded_ids = sorted(seeded)
    lock = threading.Lock()
    barrier = threading.Barrier(4, timeout=30)
    progress = threading.Condition()
    writer_state = {"iterations": 0, "allowed": 1, "done": False, "rotation_over": False}

    original_rewrap = row_encryption.data_key_rewrap

    def rewrap_then_let_the_writer_write(data_key: DataKey) -> bool:
        rewrapped = original_rewrap(data_key)
        with progress:
            writer_state["allowed"] += 1
            progress.notify_all()
            # A generous bound that only a hung writer reaches: its failure says why.
            wrote = progress.wait_for(
                lambda: (
                    writer_state["done"] or writer_state["iterations"] >= writer_state["allowed"]
                ),
                timeout=60,
            )
        if not wrote:
            with lock:
                result.failures.append("the writer did not write during the rotation in 60 s")
        return rewrapped

    # data_keys_rotate imports data_key_rewrap from this module at call time.
    monkeypatch.setattr(row_encryption, "data_key_rewrap", rewrap_then_let_the_writer_write)

    def writers_turn(i: int) -> None:
        """Wait until the rotation lets iteration `i` of the writer run (or is over)."""
        with progress:
            allowed = progress.wait_for(
                lambda: writer_state["rotation_over"] or writer_state["allowed"] > i,
                timeout=60,
            )
        assert allowed, f"the rotation did not let write {i} happen in 60 s"

    def orm_reader(i: int) -> None:
        keys = KeyCache()  # a fresh cache per "request"
        for memory in Memory.objects.filter(namespace=namespace):
            content = open_memory(keys, memory)
            if str(memory.id) in seeded:
                assert content == seeded[str(memory.id)], memory.id
            for version in memory.versions.all():
                open_version(keys, version, memory.subject_id, memory.namespace_id)

    client = api_client(raw_key)

    def api_reader(i: int) -> None:
        for memory_id in random.sample(seeded_ids, 4):
            response = client.get(f"/api/v1/namespaces/{namespace.slug}/memories/{memory_id}")
            assert response.status_code == 200, response.content
            assert response.json()["content"] == seeded[memory_id]

    def writer(i: int) -> None:
        writers_turn(i)
        actor = Actor.system("writer")
        existing = memory_create(
            actor=actor,
            namespace=namespace,
            item=NewMemory(
                subject_external_id=f"seed-{i % SUBJECTS}",
                content=f"written {i} for an existing subject",
            ),
        )
        fresh = memory_create(
            actor=actor,
            namespace=namespace,
            item=NewMemory(
                subject_external_id=f"new-{i}", content=f"written {i} for a new subject"
            ),
        )
        memory_update(actor=actor, memory=fresh, content=f"written {i}, revised")
        with lock:
            result.written[str(existing.id)] = f"written {i} for an existing subject"
            result.written[str(fresh.id)] = f"written {i}, revised"
        with progress:
            writer_state["iterations"] += 1
            progress.notify_all()

    def worker(step: Callable[[int], None]) -> None:
        try:
            for i in range(ITERATIONS):
                step(i)
                if i == 0:
                    barrier.wait()
        except BaseException:
            with lock:
                result.failures.append(traceback.format_exc())
            barrier.abort()
        finally:
            connection.close()
            if step is writer:
                with progress:
                    writer_state["done"] = True
                    progress.notify_all()

    threads = [
        threading.Thread(target=worker, args=(step,), name=step.__name__)
        for step in (orm_reader, api_reader, writer)
    ]
    for thread in threads:
        thread.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass  # a worker failed before the rotation began: its traceback is in the failures
    else:
        before = writer_state["iterations"]
        result.rewrapped = data_keys_rotate(actor=Actor.system("tests"), batch_size=2)
        result.writes_during_rotation = writer_state["iterations"] - before
    finally:
        with progress:
            writer_state["rotation_over"] = True
            progress.notify_all()
        for thread in threads:
            thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a worker hung"
    return result


@pytest.fixture
def rotation(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Rotation:
    settings.MEMORYHUB_KEYRING = {1: K1}
    namespace = namespace_create(actor=Actor.system("tests"), slug="rotating")
    seeded = seed(namespace)
    assert set(DataKey.objects.values_list("kek_version", flat=True)) == {1}
    settings.MEMORYHUB_KEYRING = {1: K1, 2: K2}
    return run_rotation_under_load(namespace, seeded, monkeypatch)


@pytest.mark.django_db(transaction=True)
def test_it_rotates_keys_while_others_read_and_write_without_a_failure(
    rotation: Rotation, settings: Any
) -> None:
    assert rotation.failures == [], "\n".join(rotation.failures)
    assert len(rotation.written) == 2 * ITERATIONS
    # Exactly the keys that existed before are re-wrapped; the writers' new keys were not.
    assert rotation.initial_keys == SUBJECTS + 1
    assert rotation.rewrapped == rotation.initial_keys
    # One write after each re-wrapped key, while the rotation held that key's batch.
    assert rotation.writes_during_rotation == rotation.initial_keys


@pytest.mark.django_db(transaction=True)
def test_it_leaves_every_data_key_under_the_new_kek_including_keys_made_meanwhile(
    rotation: Rotation,
) -> None:
    assert rotation.failures == [], "\n".join(rotation.failures)
    assert DataKey.objects.filter(kek_version=1).count() == 0
    new_subject_keys = DataKey.objects.filter(subject__external_id__startswith="new-")
    assert new_subject_keys.count() == ITERATIONS
    assert set(new_subject_keys.values_list("kek_version", flat=True)) == {2}
    assert DataKey.objects.filter(kek_version=2).count() == SUBJECTS + 1 + ITERATIONS


@pytest.mark.django_db(transaction=True)
def test_every_memory_and_version_decrypts_once_the_old_kek_is_removed(
    rotation: Rotation, settings: Any
) -> None:
    assert rotation.failures == [], "\n".join(rotation.failures)
    settings.MEMORYHUB_KEYRING = {2: K2}
    keys = KeyCache()
    memories = list(Memory.objects.filter(namespace=rotation.namespace))
    assert len(memories) == 2 * SUBJECTS + 1 + 2 * ITERATIONS
    for memory in memories:
        content = open_memory(keys, memory)
        if str(memory.id) in rotation.written:
            assert content == rotation.written[str(memory.id)]
    versions = MemoryVersion.objects.filter(memory__namespace=rotation.namespace)
    assert versions.count() == 3 * SUBJECTS + 1 + 3 * ITERATIONS
    for version in versions.select_related("memory"):
        open_version(keys, version, version.memory.subject_id, version.memory.namespace_id)


@pytest.mark.django_db
def test_the_rotate_keys_command_prints_the_count_and_writes_one_audit_event(
    settings: Any,
) -> None:
    settings.MEMORYHUB_KEYRING = {1: K1}
    namespace = namespace_create(actor=Actor.system("tests"), slug="rotating")
    for n in range(3):
        memory_create(
            actor=Actor.system("tests"),
            namespace=namespace,
            item=NewMemory(subject_external_id=f"s{n}", content="hello"),
        )
    settings.MEMORYHUB_KEYRING = {1: K1, 2: K2}
    last_event = AuditEvent.objects.order_by("-id").first()
    out = io.StringIO()

    call_command("rotate_keys", stdout=out)

    assert "Re-wrapped 4 data keys" in out.getvalue()
    assert "KEK version 2" in out.getvalue()
    events = list(AuditEvent.objects.filter(id__gt=last_event.id))
    assert [event.action for event in events] == ["keys.rotate"]
    assert events[0].details == {"rewrapped": 4, "kek_version": 2}
    assert DataKey.objects.filter(kek_version=1).count() == 0
