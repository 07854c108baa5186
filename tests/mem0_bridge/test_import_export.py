"""`manage.py import_mem0 --export`: the JSON Mem0's platform returns for get_all, imported
into acme through MemoryHub's write path; globex's namespace gets nothing of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from apps.audit.models import AuditEvent
from apps.mem0_bridge.models import ImportedMemory
from apps.memories.models import Memory, MemoryVersion, Subject
from apps.memories.selectors import memories_open
from apps.namespaces.models import PiiPolicy
from tests.conftest import Tenant
from tests.scanning import columns_containing


def _memory(mem0_id: str, user: str, text: str, **extra: object) -> dict[str, object]:
    return {
        "id": mem0_id,
        "memory": text,
        "user_id": user,
        "hash": "unused",
        "metadata": None,
        "categories": [],
        "created_at": "2025-03-01T10:00:00-08:00",
        "updated_at": "2025-03-02T11:00:00-08:00",
        **extra,
    }


EXPORT = {
    "count": 6,
    "next": None,
    "previous": None,
    "results": [
        _memory(
            "m-1",
            "alice",
            "Alice is allergic to peanuts",
            agent_id="diet-bot",
            run_id="visit-1",
            categories=["health", "food"],
            metadata={"source": "chat"},
        ),
        _memory("m-2", "bob", "Bob prefers window seats"),
        _memory("m-3", "wang", "王先生住在上海，喜欢喝绿茶"),
        _memory("m-4", "alice", "  alice is allergic to PEANUTS "),  # a duplicate of m-1
        {"id": "m-5", "user_id": "bob", "memory": ""},  # bad: no text
        _memory("m-6", "bob", "Bob's e-mail is bob@example.com"),
    ],
}


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(EXPORT, ensure_ascii=False), encoding="utf-8")
    return path


def _import(path: Path, *, dry_run: bool = False) -> tuple[str, str]:
    out, err = _Stream(), _Stream()
    call_command(
        "import_mem0", namespace="acme", export=path, dry_run=dry_run, stdout=out, stderr=err
    )
    return out.text, err.text


class _Stream:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_it_imports_the_export_through_the_write_path(acme: Tenant, export: Path) -> None:
    out, err = _import(export)
    assert "Imported 4 memories" in out
    assert "Skipped m-5: no text in 'memory'" in err
    assert "Importing [##############################] 6/6 100%" in err  # the progress bar
    memories = {m.memory.source["mem0_id"]: m for m in memories_open(Memory.objects.all())}
    assert set(memories) == {"m-1", "m-2", "m-3", "m-6"}
    alice = memories["m-1"]
    assert alice.content == "Alice is allergic to peanuts"
    assert alice.memory.subject.external_id == "alice"
    assert alice.memory.tags == ["food", "health"]
    assert alice.memory.metadata == {"source": "chat", "agent_id": "diet-bot", "run_id": "visit-1"}
    assert alice.memory.session_key == "visit-1"
    assert alice.memory.created_at.isoformat() == "2025-03-01T18:00:00+00:00"
    assert alice.memory.valid_from == alice.memory.created_at
    assert alice.memory.updated_at.isoformat() == "2025-03-02T19:00:00+00:00"
    assert alice.memory.embedding is not None
    assert memories["m-3"].content == "王先生住在上海，喜欢喝绿茶"
    assert set(Subject.objects.values_list("external_id", flat=True)) == {"alice", "bob", "wang"}


def test_it_keeps_no_plaintext_in_the_tables(acme: Tenant, export: Path) -> None:
    _import(export)
    assert columns_containing("allergic to peanuts") == []
    assert columns_containing("上海") == []


def test_it_records_a_duplicate_against_the_memory_it_repeats(acme: Tenant, export: Path) -> None:
    _import(export)
    duplicate = ImportedMemory.objects.get(source_id="m-4")
    original = ImportedMemory.objects.get(source_id="m-1")
    assert duplicate.duplicate
    assert duplicate.memory_id == original.memory_id


def test_it_audits_the_import_with_its_counts(acme: Tenant, export: Path) -> None:
    _import(export)
    batches = AuditEvent.objects.filter(action="memory.import")
    assert sum(event.details["count"] for event in batches) == 4
    (total,) = AuditEvent.objects.filter(action="mem0.import")
    assert total.details["read"] == 6
    assert total.details["imported"] == 4
    assert total.details["duplicates"] == 1
    assert total.details["bad"] == 1
    assert total.details["subjects"] == 3


def test_a_second_run_imports_nothing_twice(acme: Tenant, export: Path) -> None:
    _import(export)
    out, _err = _import(export)
    assert "Imported 0 memories" in out
    assert "already imported 5" in out
    assert Memory.objects.count() == 4
    assert MemoryVersion.objects.count() == 4


def test_a_deleted_memory_is_not_imported_again(acme: Tenant, export: Path) -> None:
    _import(export)
    Memory.objects.filter(source__mem0_id="m-2").delete()
    _import(export)
    assert not Memory.objects.filter(source__mem0_id="m-2").exists()


def test_a_dry_run_stores_nothing_and_says_what_it_would(acme: Tenant, export: Path) -> None:
    acme.namespace.pii_policy = PiiPolicy.TAG
    acme.namespace.save()
    out, err = _import(export, dry_run=True)
    assert "Would import 4 memories" in out
    assert "3 subjects (3 new)" in out
    assert "duplicates 1" in out
    assert "email x1" in out
    assert "Dry run: nothing was stored." in out
    assert "Skipped m-5" in err
    assert not Memory.objects.exists()
    assert not ImportedMemory.objects.exists()


def test_the_namespace_s_pii_policy_applies(acme: Tenant, export: Path) -> None:
    acme.namespace.pii_policy = PiiPolicy.REJECT
    acme.namespace.save()
    _out, err = _import(export)
    assert "Skipped m-6: The namespace's PII policy rejects this content" in err
    assert Memory.objects.count() == 3


def test_it_reads_the_list_and_paged_forms(acme: Tenant, tmp_path: Path) -> None:
    pages = [
        {"count": 2, "next": "…", "previous": None, "results": [EXPORT["results"][1]]},
        {"count": 2, "next": None, "previous": "…", "results": [EXPORT["results"][2]]},
    ]
    path = tmp_path / "pages.json"
    path.write_text(json.dumps(pages), encoding="utf-8")
    _import(path)
    flat = tmp_path / "list.json"
    flat.write_text(json.dumps([EXPORT["results"][0]]), encoding="utf-8")
    _import(flat)
    assert Memory.objects.count() == 3


def test_a_file_nested_too_deeply_is_refused(acme: Tenant, tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    with pytest.raises(CommandError, match="not JSON MemoryHub accepts"):
        _import(path)


def test_an_unknown_namespace_is_refused(db: None, export: Path) -> None:
    with pytest.raises(CommandError, match="No namespace 'acme'"):
        _import(export)


def test_the_outsider_s_namespace_gets_nothing(acme: Tenant, globex: Tenant, export: Path) -> None:
    _import(export)
    assert not Memory.objects.filter(namespace=globex.namespace).exists()
    assert not ImportedMemory.objects.filter(namespace=globex.namespace).exists()


def test_each_imported_batch_is_a_memory_created_event_at_a_webhook(
    acme: Tenant, export: Path, settings: Any
) -> None:
    from apps.webhooks.delivery import deliver_due
    from tests.webhooks.conftest import Receiver, hook_for

    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_WEBHOOK_DISPATCHER = False
    receiver = Receiver()
    receiver.start()
    try:
        hook = hook_for(acme, receiver.url, ["memory.created"])
        _import(export)
        while deliver_due():
            pass
        payloads = receiver.verified(hook.secret)
    finally:
        receiver.stop()
    stored = Memory.objects.filter(namespace=acme.namespace).count()
    assert [p["type"] for p in payloads] == ["memory.created"]
    data = payloads[0]["data"]
    assert (data["bulk"], data["source"], data["count"]) == (True, "mem0", stored)
