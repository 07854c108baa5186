"""Which audited changes are webhook events, and what their data holds.

`on_audit_event` is registered with the audit log (apps/webhooks/apps.py): every audited
write calls it inside its own transaction. It returns at once for actions that are no event,
for refused or failed actions, and for namespaces without endpoints (the count the namespace
row carries, read from the object the writer already holds: no query). Otherwise it writes
the outbox rows in that transaction (services.event_record).

Data is content-free: ids, kinds, times and counts, copied from the audit row's fields and
a per-type list of its details (never free text such as a purge's reason). Bulk actions
give one event with their counts: `memory.create_bulk` a `memory.created` with `count` and
`bulk: true` (its audit row names no memory), `memory.bulk_delete` a `memory.deleted` with
its counts.

A namespace object that was loaded before an endpoint was added (a sweep's loop over
namespaces) still says it has none: the changes it makes before it is loaded again are not
sent. Requests and tasks load their namespace when they start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apps.audit.models import AuditEvent


# Audit action -> event types. A reviewer ending a memory is both its end and a review.
BY_ACTION: dict[str, tuple[str, ...]] = {
    "memory.create": ("memory.created",),
    "memory.create_bulk": ("memory.created",),
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

# The details each event copies from its audit row (all content-free by the audit log's own
# rule; free text such as reasons and actor names is left out).
DETAIL_FIELDS: dict[str, tuple[str, ...]] = {
    "memory.created": ("kind", "tokens", "count", "subjects"),
    "memory.updated": ("fields", "version"),
    "memory.superseded": ("successor", "with"),
    "memory.ended": ("from_status",),
    "memory.disputed": ("by_message",),
    "memory.deleted": ("versions", "memories", "count", "recall_log_rows"),
    "subject.erased": (
        "subject_fingerprint",
        "memories_deleted",
        "versions_deleted",
        "data_keys_destroyed",
        "erased_at",
        "receipt_hash",
    ),
    "subject.exported": ("memories", "versions"),
    "review.resolved": ("from_status", "merged"),
    "purge.completed": ("memories", "versions", "recall_log_rows"),
    "retention.applied": ("counts",),
    "audit.verification_failed": ("chain", "broken_event_id", "verification_id"),
}


def event_types(event: AuditEvent) -> tuple[str, ...]:
    """The webhook events an audit event is (none for most)."""
    if event.outcome != "success" and event.action != "audit.chain_broken":
        return ()
    types = BY_ACTION.get(event.action, ())
    if event.action == "memory.supersede" and (event.details or {}).get("successor", "") is None:
        return ("memory.ended",)  # superseded by nothing: it ended
    return types


def event_data(event: AuditEvent, event_type: str) -> dict[str, Any]:
    """The content-free `data` of one event."""
    details: Mapping[str, Any] = event.details or {}
    data: dict[str, Any] = {
        "namespace": event.namespace_slug,
        "occurred_at": event.created_at.isoformat(),
        "audit_event_id": event.pk,
        "actor_type": event.actor_type,
    }
    if event.object_type == "memory" and event.object_id:
        data["memory_id"] = event.object_id
    if event.subject_id and event_type != "subject.erased":
        data["subject_id"] = str(event.subject_id)
    for name in DETAIL_FIELDS.get(event_type, ()):
        if name in details:
            data[name] = details[name]
    if event.action == "memory.create_bulk":
        data["bulk"] = True
    if event_type == "review.resolved":
        data["decision"] = event.action.removeprefix("memory.")
    if event_type == "retention.applied":
        data["job"] = event.action.removeprefix("lifecycle.")
    if event_type == "purge.completed":
        data["job_id"] = event.object_id
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

    for event_type in types:
        services.event_record(
            audit_event=event,
            event_type=event_type,
            data=event_data(event, event_type),
            external_id=private.get("external_id") if event_type == "subject.erased" else None,
        )
