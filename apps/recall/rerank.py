"""An optional cross-encoder reranker over a `/rerank` endpoint the operator configures
(MEMORYHUB_RERANK_URL), in the shape Cohere, Jina and Hugging Face TEI share: the query and
the candidate texts go out, a relevance score per text comes back.

    request   {"model", "query", "documents": [text, ...], "top_n"}   (Cohere, Jina)
              {"query", "texts": [text, ...]}              (TEI, MEMORYHUB_RERANK_API=tei)
    answer    {"results": [{"index", "relevance_score"}, ...]}        (Cohere, Jina)
              [{"index", "score"}, ...]                               (TEI)

The texts are decrypted memory content: they leave the server only for this endpoint, which
the operator chose. Off by default; a recall configuration turns it on (`rerank`). A failing
or slow endpoint never fails a recall: the fused order stands, and the recall's timings say
so (`rerank_failed`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import httpx
from django.conf import settings

logger = logging.getLogger(__name__)


class RerankError(Exception):
    pass


@dataclass
class Reranker:
    url: str
    model: str
    api: str  # "cohere" (also Jina) | "tei"
    api_key: str | None
    timeout: float

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """A score per text, in the texts' order (higher: more relevant)."""
        if not texts:
            return []
        if self.api == "tei":
            body: dict[str, object] = {"query": query, "texts": list(texts)}
        else:
            body = {"model": self.model, "query": query, "documents": list(texts),
                    "top_n": len(texts)}  # fmt: skip
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = httpx.post(self.url, json=body, headers=headers, timeout=self.timeout)
        except httpx.HTTPError as error:
            raise RerankError(f"the rerank endpoint failed: {type(error).__name__}") from None
        if response.is_error:
            raise RerankError(f"the rerank endpoint answered {response.status_code}")
        try:
            data = response.json()
            items = data["results"] if isinstance(data, dict) else data
            found = {
                int(item["index"]): float(item.get("relevance_score", item.get("score")))
                for item in items
            }
        except (ValueError, KeyError, TypeError):
            raise RerankError("the rerank endpoint returned an unexpected body") from None
        if set(found) != set(range(len(texts))):
            raise RerankError("the rerank endpoint did not score every text")
        return [found[i] for i in range(len(texts))]


@cache
def configured() -> Reranker | None:
    """The operator's reranker, if MEMORYHUB_RERANK_URL is set."""
    if not settings.MEMORYHUB_RERANK_URL:
        return None
    return Reranker(
        url=settings.MEMORYHUB_RERANK_URL,
        model=settings.MEMORYHUB_RERANK_MODEL,
        api=settings.MEMORYHUB_RERANK_API,
        api_key=settings.MEMORYHUB_RERANK_API_KEY,
        timeout=settings.MEMORYHUB_RERANK_TIMEOUT,
    )
