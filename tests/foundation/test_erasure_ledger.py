"""The erasure ledger: appended before every erasure commits, chained, serialised, refusing
the erasure when it cannot be written."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import uuid
from pathlib import Path

import pytest
from django.test import Client, override_settings

from apps.audit.actors import Actor
from apps.memories.models import DataKey, Memory, Subject
from apps.memories.services import subject_erase
from apps.namespaces.services import namespace_delete
from memoryhub import erasure_ledger
from memoryhub.erasure_ledger import Head, LedgerBroken, LedgerUnavailable
from tests.conftest import Tenant
from tests.privacy.conftest import link_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    folder = tmp_path / "ledger"
    with override_settings(MEMORYHUB_ERASURE_LEDGER=folder):
        yield folder


def remember(tenant: Tenant, subject: str, content: str) -> str:
    response = tenant.client.post(
        tenant.url("memories"), {"subject": subject, "content": content}, format="json"
    )
    assert response.status_code == 201, response.json()
    return str(response.json()["id"])


def test_entries_chain_and_the_head_names_the_last(ledger: Path) -> None:
    first = erasure_ledger.append(namespace_id=1, scope="namespace")
    second = erasure_ledger.append(namespace_id=2, scope="subject", subject="ab" * 32)
    assert (first.seq, second.seq) == (1, 2)
    assert second.prev == first.hash
    assert erasure_ledger.head() == Head(2, second.hash)
    assert [e.scope for e in erasure_ledger.entries()] == ["namespace", "subject"]


def test_a_changed_entry_breaks_the_chain_naming_its_line(ledger: Path) -> None:
    for namespace_id in (1, 2, 3):
        erasure_ledger.append(namespace_id=namespace_id, scope="namespace")
    path = ledger / erasure_ledger.FILENAME
    lines = path.read_text().splitlines()
    changed = json.loads(lines[1])
    changed["namespace_id"] = 9
    lines[1] = json.dumps(changed, sort_keys=True)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LedgerBroken, match="line 2"):
        erasure_ledger.head()


def test_a_torn_last_line_is_ignored_and_cut_by_the_next_append(ledger: Path) -> None:
    first = erasure_ledger.append(namespace_id=1, scope="namespace")
    path = ledger / erasure_ledger.FILENAME
    with path.open("ab") as handle:
        handle.write(b'{"seq": 2, "at": "2026')  # a crash mid-append
    assert erasure_ledger.head() == Head(1, first.hash)
    second = erasure_ledger.append(namespace_id=2, scope="namespace")
    assert second.prev == first.hash
    assert second.seq == 2
    assert erasure_ledger.head() == Head(2, second.hash)


def test_appends_from_many_threads_are_serialised(ledger: Path) -> None:
    def work() -> None:
        for _ in range(20):
            erasure_ledger.append(namespace_id=1, scope="memories", memory_ids=[uuid.uuid4()])

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert erasure_ledger.head().seq == 120  # and every link checked


def test_since_returns_newer_entries_and_the_overlap_before_the_head(ledger: Path) -> None:
    entries = [erasure_ledger.append(namespace_id=n, scope="namespace") for n in (1, 2, 3)]
    head = Head(2, entries[1].hash)
    assert [e.seq for e in erasure_ledger.since(head)] == [3]
    assert [e.seq for e in erasure_ledger.since(head, overlap_seconds=3600)] == [1, 2, 3]
    assert [e.seq for e in erasure_ledger.since(Head())] == [1, 2, 3]
    with pytest.raises(LedgerBroken, match="does not hold the backup's ledger head"):
        erasure_ledger.since(Head(2, "f" * 64))


def test_a_subject_erasure_is_in_the_ledger_with_the_receipts_fingerprint(
    ledger: Path, acme: Tenant
) -> None:
    remember(acme, "ledger-person", "Likes green tea")
    subject = Subject.objects.get(namespace=acme.namespace, external_id="ledger-person")
    receipt = subject_erase(actor=Actor.system("tests"), subject=subject, via="command")
    (entry,) = erasure_ledger.entries()
    assert entry.scope == "subject"
    assert entry.namespace_id == acme.namespace.pk
    assert entry.subject == receipt.subject_fingerprint
    assert entry.receipt == receipt.receipt_hash
    assert "ledger-person" not in (ledger / erasure_ledger.FILENAME).read_text()


def test_deleting_memories_and_namespaces_is_in_the_ledger(ledger: Path, acme: Tenant) -> None:
    memory_id = remember(acme, "ledger-person", "Likes green tea")
    response = acme.client.delete(acme.url(f"memories/{memory_id}"))
    assert response.status_code == 204
    namespace_delete(actor=Actor.system("tests"), namespace=acme.namespace)
    memories, namespace = erasure_ledger.entries()
    assert (memories.scope, memories.memory_ids) == ("memories", [memory_id])
    assert (namespace.scope, namespace.namespace_id) == ("namespace", acme.namespace.pk)


def test_without_a_writable_ledger_an_erasure_is_refused_and_nothing_changes(
    tmp_path: Path, acme: Tenant, caplog: pytest.LogCaptureFixture
) -> None:
    memory_id = remember(acme, "ledger-person", "Likes green tea")
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the ledger's folder should be")
    with override_settings(MEMORYHUB_ERASURE_LEDGER=blocked), caplog.at_level(logging.ERROR):
        response = acme.client.post(acme.url("subjects/ledger-person/erase"))
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "erasure_ledger_unavailable"
        subject = Subject.objects.get(namespace=acme.namespace, external_id="ledger-person")
        with pytest.raises(LedgerUnavailable):
            subject_erase(actor=Actor.system("tests"), subject=subject, via="command")
    assert Memory.objects.filter(pk=memory_id).exists()
    assert DataKey.objects.filter(subject=subject).exists()
    assert "cannot be written" in caplog.text


def test_a_page_whose_erasure_is_refused_says_so_instead_of_failing(
    tmp_path: Path, acme: Tenant
) -> None:
    remember(acme, "ledger-person", "Likes green tea")
    browser = Client()
    assert browser.get(link_for(acme, "ledger-person")["url"]).status_code == 303
    subject = Subject.objects.get(namespace=acme.namespace, external_id="ledger-person")
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the ledger's folder should be")
    with override_settings(MEMORYHUB_ERASURE_LEDGER=blocked):
        response = browser.post(
            f"/portal/{subject.pk}/erase/", {"confirmation": "erase everything"}
        )
    assert response.status_code == 503
    assert b"nothing was erased" in response.content
    assert Subject.objects.filter(pk=subject.pk).exists()


def test_an_entry_of_another_format_checks_as_it_was_written(ledger: Path) -> None:
    """An entry written before a field was added (or by a newer release, with one more)
    keeps its hash: the chain covers each line as written."""
    older = {"seq": 1, "at": "2026-12-01T00:00:00+00:00", "namespace_id": 1,
             "scope": "namespace", "prev": erasure_ledger.GENESIS, "future": "x"}  # fmt: skip
    older["hash"] = hashlib.sha256(json.dumps(older, sort_keys=True).encode()).hexdigest()
    ledger.mkdir()
    (ledger / erasure_ledger.FILENAME).write_text(json.dumps(older) + "\n")
    second = erasure_ledger.append(namespace_id=2, scope="namespace")
    assert second.prev == older["hash"]
    assert erasure_ledger.head() == Head(2, second.hash)
