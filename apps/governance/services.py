"""Writes behind the dashboard's memory pages that are not a store's own: the record that a
person read decrypted content, and the purge job (started, run in batches, finished with a receipt).

Each function is keyword-only and writes its audit event in its own transaction. Details are
content-free: ids, counts, filter names, the reason given.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.audit.services import audit_record
from apps.governance.purge import PURGE, purge_filtered
from apps.governance.tasks import enqueue_purge_job
from apps.memories.models import Memory
from apps.namespaces.models import Namespace
from apps.pipeline.models import Job
from memoryhub.exceptions import ApplicationError
from memoryhub.replica import bookkeeping


def content_read_record(
    *,
    actor: Actor,
    namespace: Namespace,
    what: str,
    memory_ids: Iterable[uuid.UUID] = (),
    subject_id: uuid.UUID | None = None,
) -> AuditEvent | None:
    """Record that `actor` was shown decrypted content: which memories (ids) or which
    subject, on which page (`what`). Nothing is recorded when nothing was shown.
    Bookkeeping: the reader's next page may still be read from a replica (memoryhub/replica.py);
    otherwise every page view would send the next one to the primary."""
    ids = [str(i) for i in memory_ids]
    if not ids and subject_id is None:
        return None
    details: dict[str, Any] = {}
    if ids and subject_id is None:
        # Whose memories these are, so each subject finds the read in the privacy portal's
        # access history: the event's subject when they are all one person's.
        subjects = sorted(
            {
                str(s)
                for s in Memory.objects.filter(namespace=namespace, pk__in=ids)
                .exclude(subject=None)
                .values_list("subject_id", flat=True)
                .distinct()
            }
        )
        if len(subjects) == 1:
            subject_id = uuid.UUID(subjects[0])
        elif subjects:
            details["subjects"] = subjects
    if len(ids) > 1:
        details["memory_ids"] = ids
    with bookkeeping():
        return audit_record(
            actor=actor,
            action=f"dashboard.read.{what}",
            namespace=namespace,
            subject_id=subject_id,
            object_type="memory" if ids else "subject",
            object_id=(
                ids[0] if len(ids) == 1 else (str(subject_id) if subject_id and not ids else "")
            ),
            details=details or None,
        )


def purge_start(
    *,
    actor: Actor,
    namespace: Namespace,
    filters: dict[str, Any],
    reason: str,
    confirmation: str,
    expected: int,
) -> Job:
    """Start purging the memories that `filters` choose: the owner has seen the dry run
    (`expected` memories) and typed the namespace's slug. The job deletes only memories that
    existed when it started. Audited (who, filters, reason, the count shown)."""
    if confirmation.strip() != namespace.slug:
        raise ApplicationError(
            gettext_noop("Type the namespace's slug to confirm."),
            details={"confirmation": ["mismatch"]},
        )
    if not reason.strip():
        raise ApplicationError(gettext_noop("Give a reason."), details={"reason": ["required"]})
    if not filters:
        raise ApplicationError(
            gettext_noop(
                "Choose at least one filter: a purge never takes a whole namespace unfiltered."
            ),
            details={"filters": ["required"]},
        )
    chosen = purge_filtered(namespace, filters)
    with transaction.atomic():
        total = chosen.count()
        job = Job.objects.create(
            namespace=namespace,
            kind=PURGE,
            actor_id=actor.id[:64],
            payload={"filters": filters, "reason": reason[:200], "actor": actor.display[:200]},
            result={"total": total, "done": 0, "versions": 0, "recall_log_rows": 0},
        )
        audit_record(
            actor=actor,
            action="memory.purge.start",
            namespace=namespace,
            object_type="job",
            object_id=str(job.id),
            details={
                "filters": sorted(filters),
                "count": total,
                "shown": expected,
                "reason": reason[:200],
            },
        )
        enqueue_purge_job(str(job.id))
    return job
