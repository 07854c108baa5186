"""The SDK's write pipeline against the live server: messages (the job, waited for),
idempotent retries, documents, jobs. Without a broker the job runs in the request."""

from __future__ import annotations

import pytest
from memoryhub_client import Conflict, Job, MemoryHub, Namespace, Turn

TURNS: list[Turn] = [
    {"role": "user", "content": "I live in Hangzhou and I work as a pastry chef."},
    {"role": "assistant", "content": "Nice!"},
]


def test_it_sends_messages_and_returns_the_finished_job(ns: Namespace) -> None:
    job = ns.messages(subject="u1", session="s1", messages=TURNS)
    assert isinstance(job, Job)
    assert (job.status, job.subject, job.namespace) == ("succeeded", "u1", ns.slug)
    assert job.result["memories"]
    contents = {memory.content for memory in ns.memories.list(subject="u1")}
    assert "The user lives in Hangzhou." in contents


def test_it_reads_a_job_by_its_id(hub: MemoryHub, ns: Namespace) -> None:
    job = ns.messages(subject="u1", session="s1", messages=TURNS, extract=False)
    assert hub.job(job.id) == job
    assert hub.wait_for_job(job.id).status == "succeeded"


def test_it_stores_nothing_twice_for_one_idempotency_key(ns: Namespace) -> None:
    first = ns.messages(subject="u1", session="s1", messages=TURNS, idempotency_key="turn-1")
    again = ns.messages(subject="u1", session="s1", messages=TURNS, idempotency_key="turn-1")
    assert again.id == first.id


def test_it_raises_conflict_for_one_key_with_another_body(ns: Namespace) -> None:
    ns.messages(subject="u1", session="s1", messages=TURNS, idempotency_key="turn-1")
    with pytest.raises(Conflict) as raised:
        ns.messages(
            subject="u1",
            session="s1",
            messages=[{"role": "user", "content": "Something else"}],
            idempotency_key="turn-1",
        )
    assert raised.value.code == "idempotency_conflict"


def test_it_stores_a_document_as_chunks(ns: Namespace) -> None:
    text = "Harbour Kitchen opens at nine. " * 40
    result = ns.documents(text, title="FAQ", tags=["faq"], chunk_tokens=64)
    assert result.chunks == len(result.memories) == len(result.tokens) > 1
    assert result.job is None
    chunk = ns.memories.get(result.memories[0])
    assert "faq" in chunk.tags
