"""Mem0's shapes read without Django (apps/mem0_bridge/records.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.mem0_bridge.records import (
    BadRecord,
    Scope,
    Unsupported,
    filters_from_repr,
    record_of,
    records_of_export,
    scope_of,
)


def test_it_reads_the_ids_from_filters_and_the_top_level() -> None:
    scope = scope_of({"AND": [{"user_id": "alice"}, {"agent_id": "bot"}]}, {"run_id": "r1"})
    assert scope == Scope(user_id="alice", metadata={"agent_id": "bot", "run_id": "r1"})
    assert scope.run_id == "r1"


def test_it_reads_metadata_equalities() -> None:
    assert scope_of({"user_id": "a", "metadata": {"topic": "food"}}).metadata == {"topic": "food"}


@pytest.mark.parametrize(
    ("filters", "said"),
    [
        ({"OR": [{"user_id": "a"}]}, "does not support OR"),
        ({"user_id": {"in": ["a", "b"]}}, "equality only"),
        ({"user_id": "*"}, "leave user_id out"),
        ({"categories": {"in": ["food"]}}, "does not filter on categories"),
        ({"colour": "red"}, "Unknown filter"),
        ({"user_id": ""}, "non-empty string"),
        ({"metadata": {"a": {"gte": 1}}}, "plain values only"),
    ],
)
def test_it_refuses_what_it_cannot_honour(filters: dict, said: str) -> None:
    with pytest.raises(Unsupported, match=said):
        scope_of(filters)


def test_the_same_id_twice_must_agree() -> None:
    with pytest.raises(Unsupported, match="twice"):
        scope_of({"user_id": "a"}, {"user_id": "b"})


def test_it_reads_a_python_repr_as_a_literal_only() -> None:
    assert filters_from_repr("{'user_id': 'alice', 'agent_id': 'bot'}") == {
        "user_id": "alice",
        "agent_id": "bot",
    }
    for text in ("__import__('os').system('true')", "['a']", "{'a': ", "[" * 50 + "]" * 50):
        with pytest.raises(Unsupported):
            filters_from_repr(text)


def test_a_record_keeps_its_times_in_utc() -> None:
    record = record_of(
        {"id": "m1", "memory": "Likes tea", "created_at": "2025-03-01T10:00:00-08:00"}
    )
    assert record.created_at == datetime(2025, 3, 1, 18, tzinfo=UTC)
    assert record.updated_at == record.created_at


def test_a_record_s_history_is_ordered_by_when_each_text_was_written() -> None:
    rows = [
        {
            "event": "UPDATE",
            "new_memory": "b",
            "created_at": "2025-01-01",
            "updated_at": "2025-02-01",
        },
        {"event": "ADD", "new_memory": "a", "created_at": "2025-01-01", "updated_at": "2025-01-01"},
    ]
    record = record_of({"id": "m1", "memory": "b"}, rows)
    assert [(entry.event, entry.text) for entry in record.history] == [
        ("ADD", "a"),
        ("UPDATE", "b"),
    ]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ({"memory": "x"}, "no id"),
        ({"id": "m1", "memory": "  "}, "no text"),
        ({"id": "m1", "memory": "x", "metadata": []}, "metadata is not an object"),
        ({"id": "m1", "memory": "x", "created_at": "yesterday"}, "Invalid isoformat"),
        ({"id": "m1", "memory": "x", "user_id": "x" * 300}, "at most 255"),
    ],
)
def test_a_bad_record_names_its_id_and_why(raw: dict, said: str) -> None:
    with pytest.raises(BadRecord, match=said):
        record_of(raw)


def test_it_reads_every_form_of_get_all() -> None:
    memory = {"id": "m1", "memory": "x"}
    assert list(records_of_export([memory])) == [memory]
    assert list(records_of_export({"results": [memory]})) == [memory]
    assert list(records_of_export([{"count": 1, "results": [memory]}])) == [memory]
    with pytest.raises(ValueError, match="results"):
        list(records_of_export({"memories": []}))
