"""The optional cross-encoder reranker, against a small `/rerank` stub on loopback (never a
real endpoint): it reorders the best candidates when a recall configuration turns it on, in
the Cohere/Jina shape and in TEI's; off by default; a failing endpoint leaves the fused order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from apps.audit.actors import Actor
from apps.memories.services import NewMemory, memories_create_bulk
from apps.recall import rerank
from apps.recall.config import RecallConfig
from apps.recall.search import RecallRequest, recall_memories
from tests.conftest import Tenant
from tests.loopback import LoopbackStub

ACTOR = Actor.system("tests")
FAVOURITE = "The user keeps a pet zebra called Stripes."


class StubReranker(LoopbackStub):
    """Scores a text 1 when it mentions a zebra, else 0; `mode` "down" answers 503."""

    def __init__(self) -> None:
        super().__init__()
        self.mode = "ok"

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | bytes]:
        if self.mode == "down":
            return 503, {"error": "overloaded"}
        texts = body.get("documents") or body.get("texts") or []
        scores = [1.0 if "zebra" in text else 0.0 for text in texts]
        if path == "/rerank":  # TEI: a list, best first
            ranked = sorted(range(len(texts)), key=lambda i: -scores[i])
            return 200, [{"index": i, "score": scores[i]} for i in ranked]  # type: ignore[return-value]
        return 200, {"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]}


@pytest.fixture
def stub(settings) -> Iterator[StubReranker]:  # type: ignore[no-untyped-def]
    with StubReranker() as server:
        settings.MEMORYHUB_RERANK_URL = f"{server.url}/v1/rerank"
        settings.MEMORYHUB_RERANK_API = "cohere"
        rerank.configured.cache_clear()
        yield server
    rerank.configured.cache_clear()


@pytest.fixture
def memories(acme: Tenant) -> Tenant:
    items = [
        NewMemory(subject_external_id="u1", content=f"The user talked about animals, note {n}.")
        for n in range(12)
    ]
    items.append(NewMemory(subject_external_id="u1", content=FAVOURITE))
    memories_create_bulk(actor=ACTOR, namespace=acme.namespace, items=items)
    return acme


def texts(outcome: Any) -> list[str]:
    from apps.memories.row_encryption import KeyCache, open_memory

    keys = KeyCache()
    return [open_memory(keys, hit.memory) for hit in outcome.hits]


def ask(tenant: Tenant, config: RecallConfig) -> Any:
    return recall_memories(RecallRequest(
        actor=ACTOR, namespace=tenant.namespace, subject_external_id="u1",
        query="What animals did the user talk about?", config=config, log=False,
    ))  # fmt: skip


@pytest.mark.django_db
def test_it_is_off_unless_a_configuration_turns_it_on(memories: Tenant, stub: StubReranker) -> None:
    outcome = ask(memories, RecallConfig())
    assert stub.requests == []
    assert "rerank" not in outcome.hits[0].components


@pytest.mark.django_db
@pytest.mark.parametrize(("api", "path"), [("cohere", "/v1/rerank"), ("tei", "/rerank")])
def test_the_cross_encoder_reorders_the_best_candidates(
    memories: Tenant,
    stub: StubReranker,
    settings,
    api: str,
    path: str,  # type: ignore[no-untyped-def]
) -> None:
    settings.MEMORYHUB_RERANK_URL = f"{stub.url}{path}"
    settings.MEMORYHUB_RERANK_API = api
    rerank.configured.cache_clear()
    fused = ask(memories, RecallConfig(k=5))
    reranked = ask(memories, RecallConfig(k=5, rerank=True, rerank_candidates=13))
    assert texts(reranked)[0] == FAVOURITE
    assert reranked.hits[0].components["rerank"] == 1.0
    assert len(stub.requests) == 1
    sent = stub.requests[0]
    assert len(sent["documents" if api == "cohere" else "texts"]) == 13
    assert sent["query"] == "What animals did the user talk about?"
    assert "rerank" in reranked.timings_ms
    assert texts(fused)[0] != FAVOURITE  # the fused order had it elsewhere


@pytest.mark.django_db
def test_a_failing_endpoint_leaves_the_fused_order(memories: Tenant, stub: StubReranker) -> None:
    stub.mode = "down"
    fused = ask(memories, RecallConfig(k=5))
    degraded = ask(memories, RecallConfig(k=5, rerank=True))
    assert texts(degraded) == texts(fused)
    assert degraded.timings_ms["rerank_failed"] == 1.0
