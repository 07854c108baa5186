"""The purge job's work: delete the memories a filter chooses, a batch per transaction,
and finish with one content-free receipt. Celery's task (`tasks.py`) and the in-process
path without a broker both call `purge_job_run`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.http import QueryDict
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.governance.filters import MemoryFilter
from apps.memories.models import Memory
from apps.memories.services import memories_purge_batch
from apps.namespaces.models import Namespace
from apps.pipeline.models import Job, JobStatus
from memoryhub.exceptions import ApplicationError

PURGE = "purge"


def purge_filtered(namespace: Namespace, filters: dict[str, Any]) -> QuerySet[Memory]:
    """The memories a purge with these filters deletes (the explorer's filters)."""
    query = QueryDict(mutable=True)
    query.update(filters)
    filterset = MemoryFilter(query, queryset=Memory.objects.filter(namespace=namespace))
    if not filterset.is_valid():
        raise ApplicationError(
            gettext_noop("The filters are not valid."), details=dict(filterset.errors)
        )
    return filterset.qs


def purge_job_run(*, job_id: str, after_batch: Callable[[int], None] | None = None) -> Job:
    """Run a purge job to its end, a batch per transaction: each batch deletes up to
    MEMORYHUB_PURGE_BATCH memories and adds its counts to the job's progress in the same
    commit, so a worker killed between or inside batches resumes where the last commit left
    it and deletes nothing twice. The last transaction marks the job done and writes the one
    content-free receipt. A finished job is left as it is. `after_batch` (tests) is called
    with the batch number after each commit."""
    job = Job.objects.select_related("namespace").get(pk=job_id)
    namespace = job.namespace
    batch = 0
    while True:
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=job_id)
            if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
                return job
            chosen = purge_filtered(namespace, job.payload["filters"]).filter(
                created_at__lte=job.created_at
            )
            ids = list(
                chosen.order_by("pk").values_list("pk", flat=True)[: settings.MEMORYHUB_PURGE_BATCH]
            )
            result = dict(job.result)
            if ids:
                counts = memories_purge_batch(namespace=namespace, ids=ids, via="purge")
                result["done"] += counts["memories"]
                result["versions"] += counts["versions"]
                result["recall_log_rows"] += counts["recall_log_rows"]
                job.status = JobStatus.RUNNING
            else:
                job.status = JobStatus.SUCCEEDED
                event = audit_record(
                    actor=Actor.for_job(job.id, gettext_noop("purge")),
                    action="memory.purge",
                    namespace=namespace,
                    object_type="job",
                    object_id=str(job.id),
                    details={
                        "memories": result["done"],
                        "versions": result["versions"],
                        "recall_log_rows": result["recall_log_rows"],
                        "requested_by": job.payload.get("actor", ""),
                        "reason": job.payload.get("reason", ""),
                        "filters": sorted(job.payload["filters"]),
                    },
                )
                result["receipt_event"] = event.pk
                result["finished_at"] = timezone.now().isoformat()
            job.result = result
            job.attempts = job.attempts + (0 if ids else 1)
            job.updated_at = timezone.now()
            job.save()
        if not ids:
            return job
        batch += 1
        if after_batch is not None:
            after_batch(batch)
