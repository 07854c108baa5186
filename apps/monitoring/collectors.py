"""Figures computed when Prometheus scrapes `/metrics`, from the database and the shared
cache, so every web process answers the same: the job queue, the review queues, the last
audit-chain verification, and the LLM counters the pipeline keeps. Each is one cheap read
(an indexed count, one aggregate, one row, a few cache keys). Labels: a status, a
namespace's slug, a refusal's reason; never a subject or any content."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from apps.audit.models import VerificationStatus
from apps.audit.selectors import chain_status_latest
from apps.governance.selectors import review_sizes_by_namespace
from apps.pipeline import llm_health
from apps.pipeline.selectors import jobs_unfinished_counts


class JobQueueCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        jobs = GaugeMetricFamily(
            "memoryhub_jobs", "Jobs not finished (queued, running), by status.", labels=["status"]
        )
        for status, count in jobs_unfinished_counts().items():
            jobs.add_metric([status], count)
        yield jobs


class ReviewQueueCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        waiting = GaugeMetricFamily(
            "memoryhub_review_queue_memories",
            "Memories waiting in a namespace's review queue (near-duplicate pairs aside).",
            labels=["namespace"],
        )
        disputed = GaugeMetricFamily(
            "memoryhub_disputed_facts",
            "Disputed facts in a namespace, waiting for a person to decide.",
            labels=["namespace"],
        )
        for slug, (queued, doubted) in sorted(review_sizes_by_namespace().items()):
            waiting.add_metric([slug], queued)
            disputed.add_metric([slug], doubted)
        yield waiting
        yield disputed


class AuditVerificationCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        intact = GaugeMetricFamily(
            "memoryhub_audit_verification_intact",
            "1 when the last finished verification of every audit chain found them intact, "
            "0 when it found a broken link or could not finish.",
        )
        finished = GaugeMetricFamily(
            "memoryhub_audit_verification_timestamp_seconds",
            "When the last verification of every audit chain finished (Unix time).",
        )
        latest = chain_status_latest()
        if latest is not None and latest.finished_at is not None:
            intact.add_metric([], 1 if latest.status == VerificationStatus.SUCCEEDED else 0)
            finished.add_metric([], latest.finished_at.timestamp())
        yield intact
        yield finished


class LlmCollector(Collector):
    """The counters apps/pipeline/llm_health.py keeps in the shared cache for the configured
    LLM endpoint (since they were last reset), and its circuit breaker."""

    def collect(self) -> Iterator[Metric]:
        counters = llm_health.counters()
        figures = {
            "memoryhub_llm_calls": ("Calls to the LLM endpoint.", counters.calls),
            "memoryhub_llm_failures": ("Calls to the LLM endpoint that failed.", counters.failures),
            "memoryhub_llm_fallbacks": (
                "Jobs that used the rules because the LLM could not answer.",
                counters.fallbacks,
            ),
        }
        for name, (documentation, value) in figures.items():
            yield GaugeMetricFamily(name, documentation, value=value)
        refused = GaugeMetricFamily(
            "memoryhub_llm_refused_facts",
            "Facts from the LLM refused, by reason.",
            labels=["reason"],
        )
        for reason, count in sorted(counters.refused.items()):
            refused.add_metric([reason], count)
        yield refused
        yield GaugeMetricFamily(
            "memoryhub_llm_breaker_open",
            "1 while the circuit breaker keeps calls away from the LLM endpoint.",
            value=1 if llm_health.breaker_status().open else 0,
        )


def scrape_collectors() -> list[Collector]:
    return [
        JobQueueCollector(),
        ReviewQueueCollector(),
        AuditVerificationCollector(),
        LlmCollector(),
    ]
