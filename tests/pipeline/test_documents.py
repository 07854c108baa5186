"""POST /documents: chunking on semantic boundaries with overlap, metadata, scope, limits."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_memory
from apps.pipeline.chunking import chunk_text
from apps.tokens.tokenizers import count_tokens
from tests.conftest import Tenant

PARAGRAPHS = [
    "Alice grew up in Lyon. She studied chemistry there and loved the river walks.",
    "Her first job was at a small lab in Porto. The lab made enzymes for bakeries.",
    " ".join(f"Fact number {n} is about the enzyme line and its customers." for n in range(12)),
]
TEXT = "\n\n".join(PARAGRAPHS)
# For the API, whose chunks are at least 64 tokens: paragraphs of 38 and 53 tokens, then one
# of 30 sentences that is cut between them.
DOCUMENT_PARAGRAPHS = [
    "Alice grew up in Lyon. She studied chemistry there and loved the river walks along the "
    "Saone and the Rhone, where she often met her friends from the university on long summer "
    "evenings.",
    "Her first job was at a small lab in Porto. The lab made enzymes for bakeries, breweries "
    "and dairies all over the north of Portugal, and it was there, over three busy years, that "
    "she learned how to run a team of her own.",
    " ".join(f"Fact number {n} is about the enzyme line and its customers." for n in range(30)),
]
DOCUMENT = "\n\n".join(DOCUMENT_PARAGRAPHS)


def count(text: str) -> int:
    return count_tokens(text, "cl100k_base")


def test_chunks_keep_paragraphs_whole_and_split_long_ones_at_sentences() -> None:
    chunks = chunk_text(TEXT, size=30, overlap=15, count=count)
    assert chunks[0].text == PARAGRAPHS[0]
    assert chunks[1].text == PARAGRAPHS[1]
    assert all(chunk.tokens <= 30 for chunk in chunks)
    assert all(chunk.tokens == count(chunk.text) for chunk in chunks)
    # The long paragraph is cut between sentences, never inside one.
    for chunk in chunks[2:]:
        assert chunk.text.startswith("Fact number")
        assert chunk.text.endswith("customers.")
    # Every sentence is in some chunk; neighbours share their boundary sentence.
    for n in range(12):
        assert any(f"Fact number {n} " in chunk.text for chunk in chunks)
    for before, after in itertools.pairwise(chunks[2:]):
        last_sentence = before.text.rsplit("Fact number", 1)[1]
        assert after.text.startswith("Fact number" + last_sentence)


def test_a_sentence_longer_than_a_chunk_is_split_between_words() -> None:
    long = " ".join(["word"] * 300) + "."
    chunks = chunk_text(long, size=50, overlap=0, count=count)
    assert len(chunks) > 1
    assert all(chunk.tokens <= 50 for chunk in chunks)
    assert " ".join(chunk.text for chunk in chunks) == long


@pytest.mark.django_db
def test_a_document_becomes_chunk_memories_with_their_position(acme: Tenant) -> None:
    body = {
        "text": DOCUMENT,
        "title": "Alice's career",
        "metadata": {"source": "wiki"},
        "chunk_tokens": 64,
        "overlap_tokens": 16,
    }
    response = acme.client.post(acme.url("documents"), body, format="json")
    assert response.status_code == 201, response.json()
    result = response.json()
    memories = Memory.objects.filter(metadata__document=result["document"]).order_by(
        "metadata__chunk"
    )
    assert [str(m.id) for m in memories] == result["memories"]
    assert result["chunks"] == len(memories) >= 4
    keys = KeyCache()
    assert open_memory(keys, memories[0]) == DOCUMENT_PARAGRAPHS[0]
    first = memories[0]
    assert first.subject_id is None  # no subject: shared with the namespace
    assert first.kind == "semantic"
    assert first.metadata == {
        "source": "wiki", "document": result["document"], "chunk": 0, "title": "Alice's career",
    }  # fmt: skip
    assert first.source["chunks"] == len(memories)
    assert first.source["tokens"] == result["tokens"][0]
    personal = acme.client.post(
        acme.url("documents"), {"subject": "u1", "text": "Just one line."}, format="json"
    )
    assert personal.status_code == 201
    (memory,) = Memory.objects.filter(metadata__document=personal.json()["document"])
    assert memory.subject.external_id == "u1"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field", "status"),
    [
        ({"text": ""}, "text", 400),
        ({"text": "x", "chunk_tokens": 8}, "chunk_tokens", 400),
        ({"text": "x", "chunk_tokens": 63}, "chunk_tokens", 400),
        ({"text": "x", "chunk_tokens": 100, "overlap_tokens": 60}, "overlap_tokens", 400),
        ({"text": "x", "surprise": True}, "surprise", 400),
        ({"text": "word " * 300_000}, "text", 413),
    ],
)
def test_bad_documents_are_refused_and_store_nothing(
    acme: Tenant, body: dict, field: str, status: int
) -> None:
    response = acme.client.post(acme.url("documents"), body, format="json")
    assert response.status_code == status, response.json()
    assert field in response.json()["error"]["details"]
    assert Memory.objects.count() == 0


@pytest.mark.django_db
def test_documents_follow_the_pii_policy_and_scope(acme: Tenant, globex: Tenant) -> None:
    from apps.namespaces.models import Namespace

    Namespace.objects.filter(pk=acme.namespace.pk).update(pii_policy="redact")
    response = acme.client.post(
        acme.url("documents"), {"text": "Support line: +1 415-555-0132."}, format="json"
    )
    (memory,) = Memory.objects.filter(metadata__document=response.json()["document"])
    assert open_memory(KeyCache(), memory) == "Support line: [PHONE]."
    foreign = globex.client.post(acme.url("documents"), {"text": "hello"}, format="json")
    assert foreign.status_code == 404


@pytest.mark.django_db
def test_a_retried_document_with_the_same_idempotency_key_stores_nothing_twice(
    acme: Tenant,
) -> None:
    body = {"text": DOCUMENT, "chunk_tokens": 64, "overlap_tokens": 16}
    headers = {"HTTP_IDEMPOTENCY_KEY": "doc-1"}
    first = acme.client.post(acme.url("documents"), body, format="json", **headers)
    count = Memory.objects.count()
    again = acme.client.post(acme.url("documents"), body, format="json", **headers)
    assert again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Memory.objects.count() == count
    other = acme.client.post(
        acme.url("documents"), {"text": "another text"}, format="json", **headers
    )
    assert other.status_code == 409
    assert Memory.objects.count() == count


# --- Bounds on the work one request makes ----------------------------------------------------

LONG = " ".join(f"Sentence {n} says something about the enzyme line." for n in range(400))


@pytest.mark.django_db
def test_a_document_of_more_chunks_than_the_limit_is_a_413_and_stores_nothing(
    acme: Tenant, settings: Any
) -> None:
    settings.MEMORYHUB_MAX_DOCUMENT_CHUNKS = 5
    before = Memory.objects.count()
    response = acme.client.post(
        acme.url("documents"), {"text": LONG, "chunk_tokens": 64}, format="json"
    )
    assert response.status_code == 413, response.json()
    error = response.json()["error"]
    assert error["code"] == "too_many_chunks"
    assert error["details"]["text"]["limit"] == 5
    assert error["details"]["text"]["chunks"] > 5
    assert Memory.objects.count() == before


@pytest.mark.django_db
def test_a_large_document_is_stored_at_once_and_embedded_by_a_job(
    acme: Tenant, settings: Any
) -> None:
    settings.MEMORYHUB_DOCUMENT_INLINE_CHUNKS = 3
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: the job is queued after commit
    response = acme.client.post(
        acme.url("documents"), {"text": LONG, "chunk_tokens": 64}, format="json"
    )
    assert response.status_code == 202, response.json()
    result = response.json()
    assert result["job"]["status"] == "queued"
    chunks = Memory.objects.filter(id__in=result["memories"])
    assert chunks.count() == result["chunks"] > 3
    assert not chunks.filter(embedding__isnull=False).exists()  # stored, not yet embedded

    from apps.pipeline.jobs import document_job_run

    job = document_job_run(job_id=result["job"]["id"])  # what the worker does
    assert job.status == "succeeded"
    assert job.result["embedded"] == result["chunks"]
    assert not chunks.filter(embedding__isnull=True).exists()
    assert document_job_run(job_id=result["job"]["id"]).result["embedded"] == result["chunks"]
    job_view = acme.client.get(f"/api/v1/jobs/{result['job']['id']}")
    assert job_view.json()["status"] == "succeeded"


@pytest.mark.django_db
def test_without_a_broker_a_large_document_is_embedded_before_the_answer(
    acme: Tenant, settings: Any
) -> None:
    settings.MEMORYHUB_DOCUMENT_INLINE_CHUNKS = 3
    response = acme.client.post(
        acme.url("documents"), {"text": LONG, "chunk_tokens": 64}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["job"]["status"] == "succeeded"
    chunks = Memory.objects.filter(id__in=response.json()["memories"])
    assert not chunks.filter(embedding__isnull=True).exists()


@pytest.mark.django_db
def test_a_key_may_send_only_so_many_items_to_embed(acme: Tenant, settings: Any) -> None:
    from django.core.cache import cache

    cache.clear()
    settings.MEMORYHUB_API_WORK_RATE = "10/hour"
    small = acme.client.post(acme.url("documents"), {"text": TEXT}, format="json")
    assert small.status_code == 201
    used = small.json()["chunks"]
    before = Memory.objects.count()
    refused = acme.client.post(
        acme.url("documents"), {"text": LONG, "chunk_tokens": 64}, format="json"
    )
    assert refused.status_code == 429, refused.json()
    assert refused.json()["error"]["code"] == "throttled"
    assert int(refused["Retry-After"]) > 0
    assert f"{10 - used} are left" in refused.json()["error"]["message"]
    assert Memory.objects.count() == before  # refused whole: nothing stored
    # What is left still goes through, one memory at a time, then no more.
    for _ in range(10 - used):
        created = acme.client.post(
            acme.url("memories"), {"subject": "u1", "content": "x"}, format="json"
        )
        assert created.status_code == 201
    over = acme.client.post(acme.url("memories"), {"subject": "u1", "content": "x"}, format="json")
    assert over.status_code == 429
    turns = {"subject": "u1", "session": "s", "messages": [{"role": "user", "content": "hi"}]}
    assert acme.client.post(acme.url("messages"), turns, format="json").status_code == 429
    cache.clear()


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["messages", "documents"])
def test_a_retry_with_the_same_idempotency_key_is_not_counted_again(
    acme: Tenant, settings: Any, path: str
) -> None:
    from django.core.cache import cache

    cache.clear()
    # Exactly the first request's work: 3 turns, or the one chunk of a short text.
    settings.MEMORYHUB_API_WORK_RATE = "3/hour" if path == "messages" else "1/hour"
    body = (
        {"subject": "u1", "session": "s", "messages": [{"role": "user", "content": "hi"}] * 3}
        if path == "messages"
        else {"text": "One. Two. Three."}
    )
    headers = {"HTTP_IDEMPOTENCY_KEY": f"retry-{path}"}
    first = acme.client.post(acme.url(path), body, format="json", **headers)
    assert first.status_code in (201, 202), first.json()
    for _ in range(3):  # the client did not hear the answer and sends it again
        again = acme.client.post(acme.url(path), body, format="json", **headers)
        assert again.status_code in (201, 202), again.json()
        assert again["Idempotent-Replayed"] == "true"
    other = acme.client.post(acme.url(path), body, format="json")  # new work: over the quota
    assert other.status_code == 429
    cache.clear()
