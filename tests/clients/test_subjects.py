"""The SDK's subject calls against the live server: state, export, erasure, portal links;
and the audit log, page after page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from memoryhub_client import ErasureReceipt, Namespace, NotFound


def test_it_reads_a_subjects_state(ns: Namespace) -> None:
    ns.memories.create("Likes tea", subject="u1")
    ns.memories.create("Likes jazz", subject="u1")
    subject = ns.subjects.get("u1")
    assert (subject.external_id, subject.paused, subject.memories) == ("u1", False, 2)


def test_it_exports_everything_about_a_subject(ns: Namespace) -> None:
    memory = ns.memories.create("Likes tea", subject="u1")
    ns.memories.update(memory.id, content="Likes green tea")
    export = ns.subjects.export("u1")
    assert export["namespace"] == ns.slug
    assert export["subject"]["external_id"] == "u1"
    (exported,) = export["memories"]
    assert exported["content"] == "Likes green tea"
    assert exported["versions"]


def test_it_erases_a_subject_and_returns_the_receipt(ns: Namespace) -> None:
    ns.memories.create("Likes tea", subject="u1")
    ns.memories.create("Likes jazz", subject="u1")
    receipt = ns.subjects.erase("u1")
    assert isinstance(receipt, ErasureReceipt)
    assert receipt.memories_deleted == 2
    assert receipt.data_keys_destroyed >= 1
    assert len(receipt.receipt_hash) == 64
    with pytest.raises(NotFound):
        ns.subjects.get("u1")


def test_it_creates_a_portal_link_for_a_subject(ns: Namespace) -> None:
    session = ns.subjects.portal_session("user-42", locale="zh-hans", flow="export")
    assert "/portal/enter/" in session.url
    assert session.expires_at > datetime.now(UTC)


def test_it_reads_the_audit_log_page_after_page(ns: Namespace) -> None:
    for content in ("One", "Two", "Three"):
        ns.memories.create(content, subject="u1")
    events = list(ns.audit(action="memory.create", page_size=2))
    assert len(events) == 3
    assert [event.id for event in events] == sorted((event.id for event in events), reverse=True)
    assert {event.outcome for event in events} == {"success"}
