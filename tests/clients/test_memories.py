"""The SDK's memory calls against the live server: create, list (every page), get,
update, versions, delete."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from memoryhub_client import Memory, Namespace, NotFound


def test_it_creates_a_memory_and_reads_it_back_typed(ns: Namespace) -> None:
    occurred = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    created = ns.memories.create(
        "Prefers answers in French",
        subject="u1",
        kind="procedural",
        tags=["language"],
        metadata={"source": "settings"},
        importance=0.8,
        occurred_at=occurred,
    )
    assert isinstance(created, Memory)
    assert (created.subject, created.kind, created.tags) == ("u1", "procedural", ["language"])
    assert created.metadata == {"source": "settings"}
    assert created.importance == 0.8
    assert created.occurred_at == occurred
    assert created.created_at.tzinfo is not None
    assert ns.memories.get(created.id) == created


def test_it_lists_every_page_of_memories(ns: Namespace) -> None:
    made = {ns.memories.create(f"Fact number {i}", subject="u1").id for i in range(5)}
    ns.memories.create("About someone else", subject="u2")
    listed = [memory.id for memory in ns.memories.list(subject="u1", page_size=2)]
    assert len(listed) == 5  # three pages of two, two and one
    assert set(listed) == made


def test_it_lists_newest_first_with_filters(ns: Namespace) -> None:
    ns.memories.create("Old", subject="u1", tags=["a"])
    newest = ns.memories.create("New", subject="u1", tags=["a"])
    ns.memories.create("Untagged", subject="u1")
    listed = list(ns.memories.list(subject="u1", tag="a"))
    assert [memory.content for memory in listed] == ["New", "Old"]
    assert listed[0].id == newest.id


def test_it_updates_a_memory_and_keeps_its_versions(ns: Namespace) -> None:
    memory = ns.memories.create("Lives in Hangzhou", subject="u1")
    updated = ns.memories.update(memory.id, content="Lives in Shanghai", reason="moved")
    assert (updated.content, updated.version) == ("Lives in Shanghai", memory.version + 1)
    versions = ns.memories.versions(memory.id)
    assert [v.content for v in versions][-1] == "Lives in Hangzhou"
    assert "moved" in {v.reason for v in versions}


def test_it_clears_a_time_with_none_and_leaves_it_when_unset(ns: Namespace) -> None:
    later = datetime.now(UTC) + timedelta(days=30)
    memory = ns.memories.create("Trip to Paris", subject="u1", expires_at=later)
    kept = ns.memories.update(memory.id, importance=0.9)
    assert kept.expires_at == later
    cleared = ns.memories.update(memory.id, expires_at=None)
    assert cleared.expires_at is None


def test_it_deletes_a_memory(ns: Namespace) -> None:
    memory = ns.memories.create("Temporary", subject="u1")
    assert ns.memories.delete(memory.id) is None
    with pytest.raises(NotFound):
        ns.memories.get(memory.id)
