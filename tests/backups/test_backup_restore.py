"""Erased stays erased, even across restores: a backup of the demo, two people erased after
it (one in the portal, one through the API), then the backup restored into an emptied
database. The erasure ledger's replay erases them again; nothing of them comes back.

These tests run PostgreSQL's own dump and restore programs (processes lane), and restore into
the test database itself."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.contenttypes.models import ContentType
from django.test import Client

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.audit.selectors import audit_chain_verify
from apps.backups.services import backup_create, backup_restore
from apps.demo.services import demo_actor, demo_load
from apps.memories import crypto, row_encryption
from apps.memories.models import DataKey, Memory, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.pipeline.models import Job
from memoryhub import maintenance
from tests.conftest import ALL_PERMISSIONS, Tenant, api_client, make_api_key
from tests.privacy.conftest import link_for

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

ERASED_IN_PORTAL, ERASED_BY_API, CORRECTED = "demo-user-2", "demo-user-3", "demo-user-1"


@dataclass
class Erased:
    external_id: str
    fingerprint: str
    memories: list[Memory]  # their rows as they were (ciphertext kept)
    plaintexts: list[str]
    subject_id: object


@pytest.fixture
def ledger(tmp_path: Path, settings: Any) -> Path:
    settings.MEMORYHUB_ERASURE_LEDGER = tmp_path / "ledger"
    settings.DATA_DIR = tmp_path / "data"  # the restore marker's place
    return settings.MEMORYHUB_ERASURE_LEDGER


@pytest.fixture
def demo(ledger: Path) -> Iterator[Tenant]:
    demo_load(actor=demo_actor(name="tests"))
    namespace = Subject.objects.get(external_id=CORRECTED).namespace
    raw = make_api_key([namespace], ALL_PERMISSIONS, name="demo app")
    yield Tenant(namespace=namespace, raw_key=raw, client=api_client(raw))
    ContentType.objects.clear_cache()  # the restore gave the rows new ids


def snapshot(tenant: Tenant, external_id: str) -> Erased:
    subject = Subject.objects.get(namespace=tenant.namespace, external_id=external_id)
    key = KeyCache().fingerprint_key(tenant.namespace.pk)
    fingerprint = hmac.new(key, external_id.encode(), hashlib.sha256).hexdigest()
    memories = list(Memory.objects.filter(subject=subject))
    assert memories, external_id
    keys = KeyCache()
    texts = [open_memory(keys, m) for m in memories]
    return Erased(external_id, fingerprint, memories, texts, subject.pk)


def erase_in_portal(tenant: Tenant, external_id: str) -> None:
    browser = Client()
    assert browser.get(link_for(tenant, external_id)["url"]).status_code == 303
    subject = Subject.objects.get(namespace=tenant.namespace, external_id=external_id)
    response = browser.post(f"/portal/{subject.pk}/erase/", {"confirmation": "erase everything"})
    assert response.status_code == 200, response.content[:300]
    assert not Subject.objects.filter(pk=subject.pk).exists()


def change_things_after_the_backup(tenant: Tenant) -> None:
    response = tenant.client.post(tenant.url(f"subjects/{ERASED_BY_API}/erase"))
    assert response.status_code == 200, response.json()
    fact = Memory.objects.filter(subject__external_id=CORRECTED, kind="semantic").first()
    assert fact is not None
    response = tenant.client.patch(
        tenant.url(f"memories/{fact.pk}"), {"content": "The user now lives in Porto."}, "json"
    )
    assert response.status_code == 200, response.json()
    for subject in (CORRECTED, "new-person"):
        response = tenant.client.post(
            tenant.url("memories"), {"subject": subject, "content": "Likes quince."}, "json"
        )
        assert response.status_code == 201, response.json()


def nothing_shows(tenant: Tenant, person: Erased, alice_client: Client) -> None:
    namespace = tenant.namespace
    assert not Subject.objects.filter(namespace=namespace, external_id=person.external_id)
    assert not Memory.objects.filter(pk__in=[m.pk for m in person.memories]).exists()
    assert not Job.objects.filter(subject_id=person.subject_id).exists()
    for path in (f"subjects/{person.external_id}", f"subjects/{person.external_id}/export"):
        assert tenant.client.get(tenant.url(path)).status_code == 404
    for query in ("what do I eat", "where do I work", "what do you know about me"):
        body = {"subject": person.external_id, "query": query}
        for endpoint in ("recall", "context"):
            response = tenant.client.post(tenant.url(endpoint), body, format="json")
            assert response.status_code in (200, 404), response.content[:300]
            shown = response.content.decode()
            assert not any(told in shown for told in person.plaintexts), endpoint
    for page in (f"/n/{namespace.slug}/subjects/", f"/n/{namespace.slug}/memories/"):
        response = alice_client.get(page)
        assert response.status_code == 200
        assert person.external_id.encode() not in response.content
    # No key left in the database opens their old ciphertext.
    keys = [row_encryption.data_key_unwrap(data_key) for data_key in DataKey.objects.all()]
    for raw in keys:
        for memory in person.memories:
            ad = row_encryption._row_ad(
                memory._meta.db_table, memory.id, memory.subject_id, memory.key_version
            )
            with pytest.raises(crypto.DecryptionError):
                crypto.decrypt(raw, bytes(memory.content_encrypted), ad)


def test_a_restore_keeps_the_erased_erased(
    demo: Tenant, tmp_path: Path, alice_client: Client
) -> None:
    backup = backup_create(actor=Actor.system("tests"), directory=tmp_path / "backup")
    portal_person = snapshot(demo, ERASED_IN_PORTAL)
    api_person = snapshot(demo, ERASED_BY_API)
    erase_in_portal(demo, ERASED_IN_PORTAL)
    change_things_after_the_backup(demo)

    restored = backup_restore(actor=Actor.system("tests"), directory=backup.directory, force=True)

    assert restored.replay is not None
    assert restored.replay.replayed == 2
    for person in (portal_person, api_person):
        nothing_shows(demo, person, alice_client)
    assert Subject.objects.filter(namespace=demo.namespace, external_id=CORRECTED).exists()
    assert not Subject.objects.filter(external_id="new-person").exists()  # newer than the backup
    checked, broken = audit_chain_verify(None)
    assert broken is None
    assert checked > 0
    event = AuditEvent.objects.filter(action="backup.restore").get()
    assert event.details["erasures_replayed"] == 2
    assert not maintenance.marker().exists()
