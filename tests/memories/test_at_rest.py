"""No plaintext at rest, and nothing readable left of an erased subject.

Memories are written with canary strings (random hex) in their content, through the API and
through the services, including in later versions. Then every text-like and binary column of
every table in the public schema is searched for the canaries.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.forms.models import model_to_dict

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories import crypto, keyword_index, row_encryption
from apps.memories.models import DataKey, Memory, MemoryVersion, Subject
from apps.memories.row_encryption import KeyCache, open_memory, open_version
from apps.memories.services import NewMemory, memory_create, memory_update
from tests.conftest import Tenant
from tests.scanning import columns_containing, scanned_columns


def canary() -> str:
    return uuid.uuid4().hex


@dataclass
class Written:
    """What the scenario wrote: the canaries, and who the doomed and surviving subjects are."""

    tenant: Tenant
    doomed_external_id: str
    canaries: list[str] = field(default_factory=list)
    survivor_contents: dict[uuid.UUID, str] = field(default_factory=dict)


@pytest.fixture
def written(acme: Tenant) -> Written:
    """Memories with canaries: two for a doomed subject via the API (one updated), one for a
    surviving subject via the services (updated), and one shared namespace memory."""
    state = Written(tenant=acme, doomed_external_id=f"subject-{canary()}")
    api_canaries = [canary() for _ in range(3)]
    created = []
    for secret in api_canaries[:2]:
        response = acme.client.post(
            acme.url("memories"),
            {"subject": state.doomed_external_id, "content": f"The passphrase is {secret} ok"},
            format="json",
        )
        assert response.status_code == 201, response.json()
        created.append(response.json()["id"])
    response = acme.client.patch(
        acme.url(f"memories/{created[0]}"),
        {"content": f"Changed: the passphrase is now {api_canaries[2]}"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json()["version"] == 2

    actor = Actor.system("tests")
    first, second, shared = canary(), canary(), canary()
    survivor = memory_create(
        actor=actor,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="survivor", content=f"Likes {first} tea"),
    )
    survivor = memory_update(actor=actor, memory=survivor, content=f"Likes {second} coffee")
    shared_memory = memory_create(
        actor=actor, namespace=acme.namespace, item=NewMemory(content=f"Office wifi is {shared}")
    )
    state.canaries = [*api_canaries, first, second, shared]
    state.survivor_contents = {
        survivor.id: f"Likes {second} coffee",
        shared_memory.id: f"Office wifi is {shared}",
    }
    return state


def erase(state: Written) -> dict[str, Any]:
    response = state.tenant.client.post(
        state.tenant.url(f"subjects/{state.doomed_external_id}/erase")
    )
    assert response.status_code == 200, response.json()
    return response.json()


def doomed_subject(state: Written) -> Subject:
    return Subject.objects.get(
        namespace=state.tenant.namespace, external_id=state.doomed_external_id
    )


# --- No plaintext at rest ------------------------------------------------------------------


@pytest.mark.django_db
def test_the_scan_covers_every_table_with_memory_data() -> None:
    tables = {table for table, _, _ in scanned_columns()}
    assert {
        "memories_memory",
        "memories_memoryversion",
        "memories_subject",
        "memories_datakey",
        "audit_auditevent",
        "accounts_apikey",
        "namespaces_namespace",
    } <= tables


@pytest.mark.django_db
def test_the_scan_finds_a_canary_planted_in_plaintext_and_binary_columns(
    written: Written,
) -> None:
    planted = canary()
    memory = Memory.objects.get(pk=next(iter(written.survivor_contents)))
    memory.tags = [planted]
    memory.metadata = {"note": planted}
    memory.save(update_fields=["tags", "metadata"])
    MemoryVersion.objects.filter(memory=memory, version=1).update(
        content_encrypted=b"\x00\xff" + planted.encode() + b"\x00"
    )
    assert sorted(columns_containing(planted)) == [
        "memories_memory.metadata (1 rows)",
        "memories_memory.tags (1 rows)",
        "memories_memoryversion.content_encrypted (1 rows)",
    ]


@pytest.mark.django_db
def test_it_stores_no_memory_content_in_plaintext_in_any_column(written: Written) -> None:
    assert Memory.objects.count() == 4
    assert MemoryVersion.objects.count() == 6
    for secret in written.canaries:
        assert columns_containing(secret) == [], secret


@pytest.mark.django_db
def test_the_keyword_index_holds_integer_hashes_not_words(written: Written) -> None:
    memory = Memory.objects.get(pk=next(iter(written.survivor_contents)))
    secret = written.canaries[4]  # the survivor's current content
    index_key = KeyCache().index_key(written.tenant.namespace.pk)
    assert memory.token_index, "the memory was not indexed"
    assert all(type(term) is int and -(2**31) <= term < 2**31 for term in memory.token_index)
    # The canary is a random hex word, which the stemmer may shorten: hash it as indexed.
    canary_terms = keyword_index.index_terms(secret, index_key)
    assert canary_terms
    assert set(canary_terms) <= set(memory.token_index)
    assert secret not in str(memory.token_index)


# --- After an erase --------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_leaves_no_row_of_an_erased_subject(written: Written) -> None:
    subject = doomed_subject(written)
    memory_ids = list(Memory.objects.filter(subject=subject).values_list("id", flat=True))
    assert len(memory_ids) == 2
    erase(written)
    assert Memory.objects.filter(subject_id=subject.pk).count() == 0
    assert Memory.objects.filter(pk__in=memory_ids).count() == 0
    assert MemoryVersion.objects.filter(memory_id__in=memory_ids).count() == 0
    assert Subject.objects.filter(pk=subject.pk).count() == 0
    assert DataKey.objects.filter(subject_id=subject.pk).count() == 0


@pytest.mark.django_db
def test_no_remaining_data_key_decrypts_an_erased_subjects_ciphertext(written: Written) -> None:
    subject = doomed_subject(written)
    memories = list(Memory.objects.filter(subject=subject))
    versions = list(MemoryVersion.objects.filter(memory__subject=subject))
    # Control: these copies do decrypt while the subject's key exists.
    keys = KeyCache()
    assert len(memories) == 2
    assert len(versions) == 3
    for memory in memories:
        assert any(secret in open_memory(keys, memory) for secret in written.canaries)
    for version in versions:
        plaintext = open_version(keys, version, subject.pk, subject.namespace_id)
        assert any(secret in plaintext for secret in written.canaries)

    erase(written)

    assert not DataKey.objects.filter(subject_id=subject.pk).exists()
    with pytest.raises(DataKey.DoesNotExist):
        KeyCache().key_for(subject.namespace_id, subject.pk)
    remaining = [row_encryption.data_key_unwrap(data_key) for data_key in DataKey.objects.all()]
    assert len(remaining) >= 2  # the namespace key and the survivor's key
    attempts = 0
    for raw in remaining:
        for memory in memories:
            ad = row_encryption._row_ad(
                memory._meta.db_table, memory.id, memory.subject_id, memory.key_version
            )
            with pytest.raises(crypto.DecryptionError):
                crypto.decrypt(raw, bytes(memory.content_encrypted), ad)
            attempts += 1
        for version in versions:
            ad = row_encryption._version_ad(version, subject.pk, version.key_version)
            with pytest.raises(crypto.DecryptionError):
                crypto.decrypt(raw, bytes(version.content_encrypted), ad)
            attempts += 1
    assert attempts == len(remaining) * 5


@pytest.mark.django_db
def test_the_erase_receipt_holds_counts_and_hashes_but_no_content(written: Written) -> None:
    receipt = erase(written)
    assert receipt["memories_deleted"] == 2
    assert receipt["versions_deleted"] == 3
    assert receipt["data_keys_destroyed"] == 1
    body = {
        name: receipt[name]
        for name in (
            "subject_id",
            "subject_fingerprint",
            "memories_deleted",
            "versions_deleted",
            "data_keys_destroyed",
            "erased_at",
        )
    }
    expected_hash = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    assert receipt["receipt_hash"] == expected_hash
    dumped = json.dumps(receipt)
    assert written.doomed_external_id not in dumped
    for secret in written.canaries:
        assert secret not in dumped


@pytest.mark.django_db
def test_no_audit_row_holds_an_erased_subjects_external_id_or_content(written: Written) -> None:
    receipt = erase(written)
    events = list(AuditEvent.objects.all())
    assert any(event.pk == receipt["audit_event_id"] for event in events)
    for event in events:
        dumped = json.dumps(model_to_dict(event), default=str)
        assert written.doomed_external_id not in dumped, event.action
        for secret in written.canaries:
            assert secret not in dumped, event.action


@pytest.mark.django_db
def test_nothing_of_an_erased_subject_remains_in_any_column(written: Written) -> None:
    erase(written)
    assert columns_containing(written.doomed_external_id) == []
    for secret in written.canaries:
        assert columns_containing(secret) == [], secret


@pytest.mark.django_db
def test_other_subjects_memories_still_decrypt_after_an_erase(written: Written) -> None:
    erase(written)
    keys = KeyCache()
    for memory_id, content in written.survivor_contents.items():
        memory = Memory.objects.get(pk=memory_id)
        assert open_memory(keys, memory) == content
        latest = memory.versions.get(version=memory.version)
        assert open_version(keys, latest, memory.subject_id, memory.namespace_id) == content
