"""Background jobs of recall. Tasks take ids, call services, and are idempotent."""

from __future__ import annotations

from dataclasses import asdict

from celery import shared_task

from apps.recall.services import recall_queries_forget
from apps.recall.subject_indexes import refresh


@shared_task(name="recall.subject_indexes")
def subject_indexes() -> dict:
    """Create and drop the partial HNSW indexes of the largest subjects (on beat)."""
    return asdict(refresh())


@shared_task(name="recall.forget_queries")
def forget_queries() -> int:
    """Forget logged recall queries past MEMORYHUB_RECALL_QUERY_DAYS (on beat, hourly)."""
    return recall_queries_forget()
