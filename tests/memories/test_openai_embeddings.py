"""The OpenAI-compatible embeddings provider against a stub `/v1/embeddings` server on
loopback: built from settings, it posts the model and the batch with the bearer key, returns
the vectors in input order and of unit length, and turns an endpoint that is down, slow or
answers garbage into an EmbeddingError that quotes no text."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import numpy as np
import pytest

from apps.memories.embeddings import (
    EmbeddingError,
    OpenAICompatibleProvider,
    get_provider,
    set_provider,
)
from apps.memories.models import Memory
from tests.conftest import Tenant
from tests.memories.embeddings_stub import StubEmbeddings, vector_for

MODEL = "text-embedding-stub"
API_KEY = "sk-stub-key-0123456789"
TEXTS = ["Prefers green tea", "Lives in Lyon", "Allergic to peanuts"]


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


@pytest.fixture
def stub() -> Iterator[StubEmbeddings]:
    with StubEmbeddings() as server:
        yield server


@pytest.fixture
def configured(settings, stub: StubEmbeddings) -> Iterator[OpenAICompatibleProvider]:
    """The process's provider, built from settings for the stub (as in production)."""
    settings.MEMORYHUB_EMBEDDING_PROVIDER = "openai"
    settings.MEMORYHUB_EMBEDDING_URL = stub.url
    settings.MEMORYHUB_EMBEDDING_MODEL = MODEL
    settings.MEMORYHUB_EMBEDDING_API_KEY = API_KEY
    settings.MEMORYHUB_EMBEDDING_TIMEOUT = 5.0
    set_provider(None)  # rebuilt from the settings above on first use
    provider = get_provider()
    assert isinstance(provider, OpenAICompatibleProvider)
    yield provider
    provider._client.close()
    set_provider(None)


def direct(url: str, **options) -> OpenAICompatibleProvider:
    """A provider with few retries, so the failure cases do not wait through the backoff."""
    return OpenAICompatibleProvider(base_url=url, model=MODEL, api_key=API_KEY, **options)


def test_settings_build_an_openai_provider_named_after_its_model(
    configured: OpenAICompatibleProvider,
) -> None:
    assert configured.name == f"openai:{MODEL}"
    assert configured.dimensions == 384
    assert get_provider() is configured  # built once per process


def test_it_posts_the_model_and_the_batch_with_the_bearer_key(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings
) -> None:
    configured.embed_documents(TEXTS)
    assert stub.paths == ["/v1/embeddings"]
    assert stub.requests == [{"model": MODEL, "input": TEXTS}]
    assert stub.headers[0]["Authorization"] == f"Bearer {API_KEY}"


def test_without_a_key_it_sends_no_authorization_header(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings, settings
) -> None:
    settings.MEMORYHUB_EMBEDDING_API_KEY = None
    set_provider(None)
    provider = get_provider()
    provider.embed_documents(TEXTS[:1])
    assert "Authorization" not in stub.headers[0]


def test_it_returns_the_vectors_in_input_order_and_of_unit_length(
    configured: OpenAICompatibleProvider,
) -> None:
    # The stub answers in reverse order with each item's index: only the index tells.
    vectors = configured.embed_documents(TEXTS)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    for text, vector in zip(TEXTS, vectors, strict=True):
        np.testing.assert_allclose(vector, unit(vector_for(text)), atol=1e-6)


def test_a_long_list_goes_in_batches_of_64_and_comes_back_in_order(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings
) -> None:
    texts = [f"note number {n}" for n in range(70)]
    vectors = configured.embed_documents(texts)
    assert [request["input"] for request in stub.requests] == [texts[:64], texts[64:]]
    expected = np.stack([unit(vector_for(text)) for text in texts])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)


def test_a_query_is_one_unit_vector(configured: OpenAICompatibleProvider) -> None:
    vector = configured.embed_query("What does the user drink?")
    assert vector.shape == (384,)
    np.testing.assert_allclose(vector, unit(vector_for("What does the user drink?")), atol=1e-6)


def test_nothing_to_embed_sends_no_request(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings
) -> None:
    assert configured.embed_documents([]).shape == (0, 384)
    assert stub.requests == []


def test_a_garbage_answer_is_an_embedding_error_that_quotes_no_text(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings
) -> None:
    stub.mode = "garbage"
    with pytest.raises(EmbeddingError, match="unexpected body") as caught:
        configured.embed_documents(["my secret diagnosis"])
    assert "secret" not in str(caught.value)
    assert API_KEY not in str(caught.value)
    assert len(stub.requests) == 1  # a garbled answer is not asked for again


def test_a_wrong_number_of_vectors_is_an_embedding_error(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings
) -> None:
    stub.mode = "wrong_count"
    with pytest.raises(EmbeddingError, match="different number of vectors"):
        configured.embed_documents(TEXTS)


def test_vectors_of_another_size_than_configured_are_an_embedding_error(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings
) -> None:
    stub.dimensions = 128
    with pytest.raises(EmbeddingError, match="returns 128 dimensions"):
        configured.embed_documents(TEXTS)


def test_an_endpoint_that_stays_down_is_an_embedding_error_after_its_retries(
    stub: StubEmbeddings,
) -> None:
    stub.mode = "down"
    with pytest.raises(EmbeddingError, match="HTTPStatusError"):
        direct(stub.url, retries=1).embed_documents(TEXTS)
    assert len(stub.requests) == 2  # the first attempt and one retry


def test_a_passing_outage_is_retried_and_then_succeeds(stub: StubEmbeddings) -> None:
    stub.mode, stub.failures_left = "down", 1
    vectors = direct(stub.url, retries=1).embed_documents(TEXTS[:1])
    np.testing.assert_allclose(vectors[0], unit(vector_for(TEXTS[0])), atol=1e-6)
    assert len(stub.requests) == 2


def test_an_unreachable_endpoint_is_an_embedding_error() -> None:
    # A port held bound but not listening, for the whole call: nobody else can take it, and
    # the kernel refuses every connection to it.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        with pytest.raises(EmbeddingError, match="ConnectError"):
            direct(f"http://127.0.0.1:{port}", retries=0).embed_documents(TEXTS)


def test_a_slow_endpoint_times_out_as_an_embedding_error(stub: StubEmbeddings) -> None:
    stub.mode = "slow"
    with pytest.raises(EmbeddingError, match="Timeout"):
        direct(stub.url, retries=0, timeout=0.3).embed_documents(TEXTS)


def test_a_refused_key_is_not_asked_again(stub: StubEmbeddings) -> None:
    stub.mode = "refuse"
    with pytest.raises(EmbeddingError):
        direct(stub.url, retries=1).embed_documents(TEXTS)
    assert len(stub.requests) == 1


@pytest.mark.django_db
def test_a_memory_written_through_the_api_is_embedded_by_the_endpoint(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings, acme: Tenant
) -> None:
    response = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "Prefers green tea"}, format="json"
    )
    assert response.status_code == 201, response.json()
    memory = Memory.objects.get(pk=response.json()["id"])
    assert memory.embedding_model == f"openai:{MODEL}"
    np.testing.assert_allclose(
        np.asarray(memory.embedding), unit(vector_for("Prefers green tea")), atol=1e-6
    )
    assert stub.requests == [{"model": MODEL, "input": ["Prefers green tea"]}]


@pytest.mark.django_db
def test_a_memory_is_still_stored_unembedded_when_the_endpoint_answers_garbage(
    configured: OpenAICompatibleProvider, stub: StubEmbeddings, acme: Tenant
) -> None:
    stub.mode = "garbage"
    response = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "Prefers green tea"}, format="json"
    )
    assert response.status_code == 201, response.json()
    memory = Memory.objects.get(pk=response.json()["id"])
    assert memory.embedding is None  # `reembed` fills it in later
    assert memory.embedding_model == ""
