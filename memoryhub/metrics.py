"""MemoryHub's Prometheus figures: the counters and histograms that processes update as
they work, and the exposition that `/metrics` serves (apps/monitoring).

Labels are bounded, always: a URL's route template (never its path), an HTTP status, a
Celery task's name, an outcome from a fixed list, the way an erasure or a deletion came
(`via`, from a fixed list), a namespace's slug. Never a subject, a
key, a query or any content.

Under gunicorn and Celery the figures are shared between processes through files
(memoryhub/metrics_directory.py); in a single process without that directory they live in
prometheus_client's default registry.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from memoryhub.metrics_directory import VARIABLE

# Seconds: from a few milliseconds (a cached recall) to the 30 s a request may take.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

http_requests = Counter(
    "memoryhub_http_requests",
    "HTTP requests answered, by route template and status.",
    ["route", "status"],
)
http_request_duration = Histogram(
    "memoryhub_http_request_duration_seconds",
    "Time to answer an HTTP request, by route template and status.",
    ["route", "status"],
    buckets=LATENCY_BUCKETS,
)
recall_duration = Histogram(
    "memoryhub_recall_duration_seconds",
    "Time of one recall (the API's, MCP's, the dashboard's, and those of context assembly).",
    buckets=LATENCY_BUCKETS,
)
recall_results = Counter("memoryhub_recall_results", "Memories served by recalls.")
context_duration = Histogram(
    "memoryhub_context_duration_seconds",
    "Time of one context assembly, its recall included.",
    buckets=LATENCY_BUCKETS,
)
context_memories = Counter("memoryhub_context_memories", "Memories packed into assembled contexts.")
ingested_messages = Counter(
    "memoryhub_ingest_messages", "Conversation turns accepted by the messages endpoint."
)
ingest_jobs = Counter(
    "memoryhub_ingest_jobs",
    "Ingestion jobs finished (turns and documents), by outcome.",
    ["outcome"],  # succeeded | failed
)
celery_tasks = Counter(
    "memoryhub_celery_tasks",
    "Celery task outcomes, by task name.",
    ["task", "outcome"],  # succeeded | failed | retried
)
# How a subject came to be erased, and how memories came to be deleted: `via` is one of these.
ERASED_VIA = ("api", "dashboard", "portal", "scheduled", "command", "restore")
PURGED_VIA = ("purge", "bulk", "single", "portal", "erasure", "namespace", "expiry", "restore")
erasures = Counter(
    "memoryhub_erasures",
    "Subjects erased (crypto-shredded and deleted), by the way the erasure came.",
    ["via"],
)
purged_memories = Counter(
    "memoryhub_purged_memories",
    "Memories deleted with their versions, by the way the deletion came.",
    ["via"],
)
for _via in ERASED_VIA:  # every series present from the start, at 0
    erasures.labels(via=_via)
for _via in PURGED_VIA:
    purged_memories.labels(via=_via)
embedding_model_load = Histogram(
    "memoryhub_embedding_model_load_seconds",
    "Time to load the local embedding model (and export it to ONNX), once per process.",
    buckets=(0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0),
)


@dataclass(frozen=True)
class Increment:
    """Adding `amount` to one series of a counter: the callable that `transaction.on_commit`
    runs (and that tests tell apart from the other work a commit starts)."""

    series: Counter  # a labelled child
    amount: float = 1.0

    def __call__(self) -> None:
        self.series.inc(self.amount)


def _bounded(via: str, allowed: tuple[str, ...]) -> str:
    if via not in allowed:
        raise ValueError(f"{via!r} is not one of {allowed}")
    return via


def count_erasure(*, via: str) -> None:
    """One subject erased `via` one of ERASED_VIA, counted when the enclosing transaction
    commits: an erasure rolled back is never counted. Outside a transaction, at once."""
    transaction.on_commit(Increment(erasures.labels(via=_bounded(via, ERASED_VIA))))


def count_purged_memories(*, via: str, memories: int) -> None:
    """`memories` deleted `via` one of PURGED_VIA, counted when the enclosing transaction
    commits (never if it rolls back)."""
    series = purged_memories.labels(via=_bounded(via, PURGED_VIA))
    if memories:
        transaction.on_commit(Increment(series, memories))


def multiprocess_mode() -> bool:
    return bool(os.environ.get(VARIABLE))


class _DefaultRegistry(Collector):
    """The process's own registry, as one collector among those of a scrape."""

    def collect(self) -> Iterable[Metric]:
        yield from REGISTRY.collect()


def exposition(scrape_collectors: Iterable[Collector]) -> bytes:
    """The text format of every figure: those of every process sharing the directory (or of
    this process alone), then those computed now by `scrape_collectors`."""
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_mode():
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_DefaultRegistry())
    for collector in scrape_collectors:
        registry.register(collector)
    return generate_latest(registry)
