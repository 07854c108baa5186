"""Which audited changes are webhook events, and what their data holds.

`on_audit_event` is registered with the audit log (apps/webhooks/apps.py): every audited
write calls it inside its own transaction. It returns at once for actions that are no event,
for refused or failed actions, and for namespaces without endpoints (the count the namespace
row carries, read from the object the writer already holds: no query). Otherwise it writes
the outbox rows in that transaction (services.event_record).

Data is content-free: ids, kinds, statuses, versions, times and counts, from the audit row
and the memory's row (the object the writer handed the audit log, or read in the change's
transaction, and then only when an endpoint listens to the event), as docs/webhooks.md
documents each type; never free text such as a purge's reason. Bulk actions give one event
with their counts: `memory.create_bulk` and `document.ingest` a `memory.created` with
`bulk: true` and `count` (their audit rows name no memory), `memory.bulk_delete` a
`memory.deleted`. An ingest job's memories give one
`memory.created` each (the job's result names them).

A namespace object that was loaded before an endpoint was added (a sweep's loop over
namespaces) still says it has none: the changes it makes before it is loaded again are not
sent. Requests and tasks load their namespace when they start.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apps.audit.models import AuditEvent


# Audit action -> event types. A reviewer ending a memory is both its end and a review.
BY_ACTION: dict[str, tuple[str, ...]] = {
    "memory.create": ("memory.created",),
    "memory.create_bulk": ("memory.created",),
    "memory.import": ("memory.created",),  # a batch of an import (manage.py import_mem0)
    "job.ingest.succeeded": ("memory.created",),  # one event per memory the job stored
    "document.ingest": ("memory.created",),
    "memory.update": ("memory.updated",),
    "memory.supersede": ("memory.superseded",),
    "memory.end": ("memory.ended", "review.resolved"),
    "memory.dispute": ("memory.disputed",),
    "memory.delete": ("memory.deleted",),
    "memory.bulk_delete": ("memory.deleted",),
    "memory.approve": ("review.resolved",),
    "memory.restore": ("review.resolved",),
    "memory.merge": ("review.resolved",),
    "memory.supersede_rollback": ("review.resolved",),
    "subject.erase": ("subject.erased",),
    "subject.export": ("subject.exported",),
    "memory.purge": ("purge.completed",),
    "lifecycle.expire": ("retention.applied",),
    "lifecycle.cap": ("retention.applied",),
    "lifecycle.summarize": ("retention.applied",),
    "audit.chain_broken": ("audit.verification_failed",),
}

# A review decision's audit action -> the documented `resolution`.
RESOLUTIONS = {
    "memory.approve": "approved",
    "memory.restore": "approved",
    "memory.supersede_rollback": "edited",
    "memory.end": "rejected",
    "memory.merge": "merged",
}


def event_types(event: AuditEvent) -> tuple[str, ...]:
    """The webhook events an audit event is (none for most)."""
    if event.outcome != "success" and event.action != "audit.chain_broken":
        return ()
    types = BY_ACTION.get(event.action, ())
    details = event.details or {}
    if event.action == "memory.supersede" and details.get("successor", "") is None:
        return ("memory.ended",)  # superseded by nothing: it ended
    if event.action == "memory.update" and details.get("review"):
        return (*types, "review.resolved")  # a disputed fact corrected: the doubt settled
    return types


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


MEMORY_FIELDS = ("kind", "status", "version", "valid_to", "superseded_by_id", "created_at")


def _memory_row(event: AuditEvent, about: Any) -> dict[str, Any] | None:
    """The memory's row now (after the change): the object the writer handed the audit log
    when it is that memory (a new one), else read in the change's transaction."""
    from apps.memories.models import Memory

    if isinstance(about, Memory) and str(about.pk) == event.object_id:
        return {name: getattr(about, name) for name in MEMORY_FIELDS}
    memory_id = _uuid(event.object_id)
    if not memory_id or event.namespace_id is None:
        return None
    rows = Memory.objects.filter(namespace_id=event.namespace_id, pk=memory_id)
    return rows.values(*MEMORY_FIELDS).first()


def _memory_fields(event: AuditEvent, about: Any = None) -> dict[str, Any]:
    """What the memory's row says now (kind, status, version, validity). Nothing when it is
    gone."""
    row = _memory_row(event, about)
    if row is None:
        return {}
    return {
        "kind": row["kind"],
        "status": row["status"],
        "version": row["version"],
        "valid_to": _iso(row["valid_to"]),
        "superseded_by": str(row["superseded_by_id"]) if row["superseded_by_id"] else None,
        "created_at": _iso(row["created_at"]),
    }


# Per event type: the documented fields (docs/webhooks.md), from the audit row (`details`,
# its time `at`) and the memory's row (`row`).
Builder = Callable[["AuditEvent", Mapping[str, Any], dict[str, Any], str], dict[str, Any]]


def _created(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    if event.action == "document.ingest":  # a document's chunks: one event for the lot
        return {
            "bulk": True,
            "count": details.get("chunks"),
            "document_id": event.object_id,
            "created_at": at,
        }
    if event.action in ("memory.create_bulk", "memory.import"):  # a batch: its counts
        return {
            "bulk": True,
            "count": details.get("count"),
            "subjects": details.get("subjects"),
            **({"source": details["source"]} if "source" in details else {}),
            "created_at": at,
        }
    return {**_pick(row, "kind", "status", "version"), "created_at": row.get("created_at", at)}


def _updated(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    return {
        **_pick(row, "kind", "status", "version"),
        "fields": details.get("fields", []),
        "updated_at": at,
    }


def _superseded(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    successor = details.get("successor") or row.get("superseded_by")
    return {**_pick(row, "kind"), "superseded_by": successor, "valid_to": row.get("valid_to") or at}


def _ended(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    return {**_pick(row, "kind"), "valid_to": row.get("valid_to") or at}


def _disputed(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    return {
        **_pick(row, "kind"),
        "disputed_by": details.get("by_message") or None,
        "disputed_at": at,
    }


def _deleted(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    if event.action == "memory.bulk_delete":  # one event for the lot, with its counts
        return {
            "bulk": True,
            "count": details.get("count", details.get("memories")),
            "deleted_at": at,
        }
    return {"kind": details.get("kind"), "deleted_at": at}


def _erased(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    names = ("subject_fingerprint", "memories_deleted", "versions_deleted", "receipt_hash")
    return {**_pick(details, *names), "erased_at": details.get("erased_at", at)}


def _exported(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    via = "portal" if event.actor_type == "subject" else "api"
    return {"memories": details.get("memories"), "exported_at": at, "via": via}


def _resolved(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "resolution": RESOLUTIONS.get(event.action) or details.get("review"),
        "merged_into": None,
        "resolved_at": at,
    }
    if event.action == "memory.merge":  # audited on the memory kept
        data.update(memory_id=details.get("merged"), merged_into=event.object_id)
    return data


def _purged(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    from apps.pipeline.models import Job

    job_id = _uuid(event.object_id)
    started = (
        Job.objects.filter(pk=job_id).values_list("created_at", flat=True).first()
        if job_id
        else None
    )
    return {
        "job_id": event.object_id,
        "memories_deleted": details.get("memories"),
        "started_at": _iso(started),
        "completed_at": at,
    }


def _retention(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    counts = details.get("counts", {})
    return {
        "job": event.action.removeprefix("lifecycle."),
        "memories_archived": counts.get("archived", 0),
        "memories_expired": counts.get("deleted", 0),
        "subjects": counts.get("subjects", 0),
        "applied_at": at,
    }


def _verification(
    event: AuditEvent, details: Mapping[str, Any], row: dict[str, Any], at: str
) -> dict[str, Any]:
    return {
        "verification_id": details.get("verification_id"),
        "event_id": details.get("broken_event_id"),
        "reason": details.get("reason", ""),
        "checked": details.get("checked"),
        "verified_at": at,
    }


def _pick(source: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {name: source.get(name) for name in names}


BUILDERS: dict[str, Builder] = {
    "memory.created": _created,
    "memory.updated": _updated,
    "memory.superseded": _superseded,
    "memory.ended": _ended,
    "memory.disputed": _disputed,
    "memory.deleted": _deleted,
    "subject.erased": _erased,
    "subject.exported": _exported,
    "review.resolved": _resolved,
    "purge.completed": _purged,
    "retention.applied": _retention,
    "audit.verification_failed": _verification,
}


def _ingested(event: AuditEvent) -> list[dict[str, Any]]:
    """The memories an ingest job stored (not those it only touched): a memory.created each."""
    from apps.memories.models import Memory
    from apps.pipeline.models import Job

    job_id = _uuid(event.object_id)
    job = Job.objects.filter(pk=job_id).values("result", "created_at").first() if job_id else None
    if job is None or event.namespace_id is None:
        return []
    rows = Memory.objects.filter(
        namespace_id=event.namespace_id,
        pk__in=(job["result"] or {}).get("memories", []),
        created_at__gte=job["created_at"],
    ).values("id", "subject_id", "kind", "status", "version", "created_at")
    return [
        {
            "namespace": event.namespace_slug,
            "audit_event_id": event.pk,
            "memory_id": str(row["id"]),
            "subject_id": str(row["subject_id"]) if row["subject_id"] else None,
            "kind": row["kind"],
            "status": row["status"],
            "version": row["version"],
            "created_at": _iso(row["created_at"]),
            "job_id": event.object_id,
        }
        for row in rows.order_by("created_at", "id")
    ]


def event_data(event: AuditEvent, event_type: str, private: Mapping[str, Any]) -> dict[str, Any]:
    """The content-free `data` of one event, with the fields docs/webhooks.md documents (and
    `namespace`, `audit_event_id`, which it allows as additions)."""
    details: Mapping[str, Any] = event.details or {}
    data: dict[str, Any] = {"namespace": event.namespace_slug, "audit_event_id": event.pk}
    if event.object_type == "memory" and event.object_id:
        data["memory_id"] = event.object_id
    if event.namespace_id is not None:
        data["subject_id"] = str(event.subject_id) if event.subject_id else None
    row = _memory_fields(event, private.get("about")) if event_type.startswith("memory.") else {}
    data.update(BUILDERS[event_type](event, details, row, event.created_at.isoformat()))
    if event_type == "subject.erased":
        data["via"] = private.get("via", "")
    return data


def on_audit_event(event: AuditEvent, namespace: Any, private: Mapping[str, Any]) -> None:
    """The audit log's listener: the outbox rows of the events `event` is, if anyone
    listens (in the audited change's transaction)."""
    types = event_types(event)
    if not types:
        return
    if event.namespace_id is not None and getattr(namespace, "webhook_endpoints", 1) == 0:
        return  # the cheap path of every audited write in a namespace without endpoints
    from apps.webhooks import services

    if event.action == "job.ingest.succeeded":
        for data in _ingested(event):
            services.event_record(audit_event=event, event_type="memory.created", data=data)
        return
    # With the memory in hand the data costs no query: it is built first, and the outbox rows
    # take one statement. Otherwise it is built only if an endpoint listens.
    at_hand = "about" in private and event.object_type == "memory"
    for event_type in types:
        build = partial(event_data, event, event_type, private)
        services.event_record(
            audit_event=event,
            event_type=event_type,
            data=build() if at_hand else build,
            external_id=private.get("external_id") if event_type == "subject.erased" else None,
        )
