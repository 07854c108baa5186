"""Lifecycle sweeps: TTL expiry, retention, the per-subject cap, and summarizing old episodes.

Each sweep works on one namespace, is idempotent (running it twice changes nothing the second
time), can preview what it would change (`dry_run=True` writes nothing), and records one
audit event with its counts in the same transaction as its changes. `lifecycle_sweep_all`
runs them all for every namespace: the periodic task on Celery beat, and the
`lifecycle` management command (with `--dry-run`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories.models import Kind, Memory, MemoryVersion, Status
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.search_fields import refresh_neighbour_context
from apps.memories.services import NewMemory, memories_insert
from apps.namespaces.models import Namespace
from apps.pipeline import extraction
from apps.recall.models import RecallLog
from memoryhub import erasure_ledger, metrics

SAMPLE = 50  # ids listed in a report (the counts are complete)
SUMMARY_TAG = "summary"


@dataclass
class SweepReport:
    job: str
    namespace: str
    dry_run: bool
    counts: dict[str, int] = field(default_factory=dict)
    memory_ids: list[str] = field(default_factory=list)  # a sample of the memories concerned

    def as_dict(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "namespace": self.namespace,
            "dry_run": self.dry_run,
            "counts": self.counts,
            "memory_ids": self.memory_ids,
        }


def _audit(actor: Actor, namespace: Namespace, report: SweepReport) -> None:
    if not report.dry_run and any(report.counts.values()):
        audit_record(
            actor=actor,
            action=f"lifecycle.{report.job}",
            namespace=namespace,
            object_type="namespace",
            object_id=str(namespace.pk),
            details={"counts": report.counts},
        )


def expire(*, actor: Actor, namespace: Namespace, dry_run: bool = False) -> SweepReport:
    """Delete memories past their `expires_at` (with their versions; counted after the commit,
    `via="expiry"`), and archive those older than the namespace's `retention_days`."""
    now = timezone.now()
    report = SweepReport("expire", namespace.slug, dry_run)
    expired = Memory.objects.filter(namespace=namespace, expires_at__lte=now)
    retained = Memory.objects.filter(
        namespace=namespace, status=Status.ACTIVE, expires_at__isnull=True
    )
    if namespace.retention_days:
        cutoff = now - timedelta(days=namespace.retention_days)
        retained = retained.filter(created_at__lt=cutoff)
    else:
        retained = retained.none()
    with transaction.atomic():
        doomed = list(
            expired.select_for_update().only(
                "id", "subject_id", "session_key", "position", "namespace_id"
            )
        )
        old = list(retained.values_list("id", flat=True))
        report.counts = {"deleted": len(doomed), "archived": len(old)}
        report.memory_ids = [str(m.id) for m in doomed[:SAMPLE]] + [str(i) for i in old[:SAMPLE]]
        if dry_run:
            return report
        if doomed:
            erasure_ledger.append(
                namespace_id=namespace.pk, scope="memories", memory_ids=[m.pk for m in doomed]
            )
            report.counts["versions_deleted"] = MemoryVersion.objects.filter(
                memory__in=doomed
            ).count()
            Memory.objects.filter(pk__in=[m.pk for m in doomed]).delete()
            refresh_neighbour_context(doomed)
            metrics.count_purged_memories(via="expiry", memories=len(doomed))
        if old:
            Memory.objects.filter(pk__in=old).update(status=Status.ARCHIVED, updated_at=now)
        _audit(actor, namespace, report)
    return report


def memory_values(
    memories: list[Memory], half_life_days: float, served: dict[Any, int]
) -> dict[Any, float]:
    """Value of keeping each memory: relevance (how often recall served it, and its
    confidence) x recency (half-life of the namespace) x importance."""
    now = timezone.now()
    values = {}
    for memory in memories:
        age = (now - (memory.occurred_at or memory.created_at)).total_seconds() / 86400
        recency = 0.5 ** (max(age, 0.0) / half_life_days) if half_life_days > 0 else 1.0
        relevance = (1.0 + math.log1p(served.get(memory.id, 0))) * memory.confidence
        values[memory.id] = relevance * recency * (0.1 + memory.importance)
    return values


def enforce_cap(*, actor: Actor, namespace: Namespace, dry_run: bool = False) -> SweepReport:
    """Archive each subject's lowest-value active memories beyond `max_memories_per_subject`."""
    report = SweepReport("cap", namespace.slug, dry_run, {"archived": 0, "subjects": 0})
    cap = namespace.max_memories_per_subject
    if not cap:
        return report
    over = (
        Memory.objects.filter(
            namespace=namespace, status=Status.ACTIVE, valid_to__isnull=True, subject__isnull=False
        )
        .values("subject_id")
        .annotate(n=Count("id"))
        .filter(n__gt=cap)
    )
    since = timezone.now() - timedelta(days=settings.MEMORYHUB_CAP_RECALL_WINDOW_DAYS)
    with transaction.atomic():
        for row in over:
            memories = list(
                Memory.objects.filter(
                    namespace=namespace,
                    subject_id=row["subject_id"],
                    status=Status.ACTIVE,
                    valid_to__isnull=True,
                ).only("id", "importance", "confidence", "created_at", "occurred_at")
            )
            served: dict[Any, int] = defaultdict(int)
            for ids in RecallLog.objects.filter(
                namespace=namespace, subject_id=row["subject_id"], created_at__gte=since
            ).values_list("memory_ids", flat=True):
                for memory_id in ids:
                    served[memory_id] += 1
            values = memory_values(memories, namespace.recency_half_life_days, served)
            ranked = sorted(memories, key=lambda m: (values[m.id], m.created_at))
            drop = [m.id for m in ranked[: len(memories) - cap]]
            report.counts["archived"] += len(drop)
            report.counts["subjects"] += 1
            report.memory_ids.extend(str(i) for i in drop[: SAMPLE - len(report.memory_ids)])
            if not dry_run:
                Memory.objects.filter(pk__in=drop).update(
                    status=Status.ARCHIVED, updated_at=timezone.now()
                )
        _audit(actor, namespace, report)
    return report


def summarize_old_episodes(
    *, actor: Actor, namespace: Namespace, dry_run: bool = False
) -> SweepReport:
    """Replace the episodic memories older than `summarize_after_days` of each subject's
    session by one summary memory linking its sources; the sources are archived (kept, not
    recalled), each linked to the summary."""
    report = SweepReport("summarize", namespace.slug, dry_run, {"summaries": 0, "archived": 0})
    days = namespace.summarize_after_days
    if not days:
        return report
    cutoff = timezone.now() - timedelta(days=days)
    old = (
        Memory.objects.filter(
            namespace=namespace, kind=Kind.EPISODIC, status=Status.ACTIVE, subject__isnull=False
        )
        .filter(Q(occurred_at__lt=cutoff) | Q(occurred_at__isnull=True, created_at__lt=cutoff))
        .exclude(tags__contains=[SUMMARY_TAG])
        .filter(expires_at__isnull=True)  # those go at their expiry, not into a summary
        .select_related("subject")
        .order_by("subject_id", "session_key", "position", "created_at")
    )
    groups: dict[tuple[Any, str], list[Memory]] = defaultdict(list)
    for memory in old:
        groups[(memory.subject_id, memory.session_key)].append(memory)
    groups = {key: members for key, members in groups.items() if len(members) >= 2}
    report.counts = {"summaries": len(groups), "archived": sum(len(m) for m in groups.values())}
    report.memory_ids = [str(m.id) for members in groups.values() for m in members][:SAMPLE]
    if dry_run or not groups:
        return report
    keys = KeyCache()
    summarizer = extraction.OfflineSummarizer(words=settings.MEMORYHUB_SUMMARY_WORDS)
    with transaction.atomic():
        for (_, session_key), members in groups.items():
            turns = [
                extraction.Turn("user", open_memory(keys, m), i) for i, m in enumerate(members)
            ]
            text = summarizer.summarize(turns) or turns[-1].content
            first, last = members[0], members[-1]
            assert first.subject is not None  # the query keeps subject__isnull=False
            (summary,) = memories_insert(
                actor=actor,
                namespace=namespace,
                items=[
                    NewMemory(
                        content=text,
                        subject_external_id=first.subject.external_id,
                        kind=Kind.EPISODIC,
                        tags=[SUMMARY_TAG],
                        importance=max(m.importance for m in members),
                        metadata={"summary_of": [str(m.id) for m in members]},
                        source={"session": session_key, "summarized": len(members)},
                        occurred_at=last.occurred_at or last.created_at,
                    )
                ],
                keys=keys,
            )
            now = timezone.now()
            for member in members:
                member.status = Status.ARCHIVED
                member.metadata = {**member.metadata, "summarized_into": str(summary.id)}
                member.updated_at = now
            Memory.objects.bulk_update(members, ["status", "metadata", "updated_at"])
        _audit(actor, namespace, report)
    return report


SWEEPS = {"expire": expire, "cap": enforce_cap, "summarize": summarize_old_episodes}


def lifecycle_sweep_all(
    *,
    actor: Actor,
    dry_run: bool = False,
    jobs: list[str] | None = None,
    namespace: Namespace | None = None,
) -> list[SweepReport]:
    """Every sweep (or those named) over every namespace (or the one given)."""
    namespaces = [namespace] if namespace is not None else list(Namespace.objects.order_by("slug"))
    return [
        SWEEPS[job](actor=actor, namespace=ns, dry_run=dry_run)
        for ns in namespaces
        for job in (jobs or list(SWEEPS))
    ]
