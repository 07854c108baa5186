"""Writes of a person's review of memories: approve (or confirm a disputed fact), end a
fact, restore, merge a duplicate pair, roll back a supersede, and the bulk changes
(archive, tag, delete, purge in batches).

Every function is keyword-only, runs in one transaction and writes exactly one audit event
in it, content-free (ids, counts, field names), except `memories_purge_batch`, whose caller
(the purge job) writes one receipt for the whole purge.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories.models import Memory, MemoryVersion, Status
from apps.memories.search_fields import refresh_neighbour_context
from apps.memories.services.memories import memory_audit
from apps.memories.services.validity import turns_end_with, turns_reopen_with
from apps.namespaces.models import Namespace
from memoryhub import erasure_ledger, metrics
from memoryhub.exceptions import ApplicationError

RECALL_LOG_TABLE = "memories_recalllog"  # the recall app's table (its rows name memory ids)


def _locked(memory: Memory) -> Memory:
    locked = Memory.objects.select_for_update().get(pk=memory.pk)
    locked.namespace = memory.namespace
    return locked


def memory_approve(*, actor: Actor, memory: Memory) -> Memory:
    """A person vouches for the memory: a pending one becomes active, a disputed one is
    confirmed (current again, with the turns that stated it), and any memory is marked
    reviewed (it leaves the review queue) with its confidence raised to 1."""
    with transaction.atomic():
        memory = _locked(memory)
        previous = memory.status
        if memory.status in (Status.PENDING_REVIEW, Status.DISPUTED):
            memory.status = Status.ACTIVE
        memory.confidence = 1.0
        memory.metadata = {**memory.metadata, "reviewed_at": timezone.now().isoformat()}
        memory.updated_at = timezone.now()
        memory.save(update_fields=["status", "confidence", "metadata", "updated_at"])
        if previous == Status.DISPUTED:  # confirmed: the turns that stated it hold again
            turns_reopen_with(actor=actor, fact=memory, when=memory.updated_at)
        memory_audit(
            actor=actor, action="memory.approve", memory=memory, details={"from_status": previous}
        )
    return memory


def memory_restore(*, actor: Actor, memory: Memory) -> Memory:
    """An archived memory becomes active again (the undo of an archive)."""
    if memory.status != Status.ARCHIVED:
        raise ApplicationError(
            gettext_noop("Only an archived memory can be restored."), status_code=409
        )
    with transaction.atomic():
        memory = _locked(memory)
        memory.status = Status.ACTIVE
        memory.updated_at = timezone.now()
        memory.save(update_fields=["status", "updated_at"])
        memory_audit(actor=actor, action="memory.restore", memory=memory)
    return memory


def memory_end(*, actor: Actor, memory: Memory) -> Memory:
    """A person says the fact no longer holds (a disputed one, mostly): it ends, kept as
    history like a fact a negation ended, and leaves the review queue."""
    with transaction.atomic():
        memory = _locked(memory)
        if memory.valid_to is not None or memory.status == Status.ARCHIVED:
            raise ApplicationError(
                gettext_noop("Only a current memory can be ended."), status_code=409
            )
        previous = memory.status
        now = timezone.now()
        memory.status = Status.ACTIVE
        memory.valid_to = now
        memory.metadata = {
            **memory.metadata,
            "ended": "ended by a reviewer",
            "reviewed_at": now.isoformat(),
        }
        memory.updated_at = now
        memory.save(update_fields=["status", "valid_to", "metadata", "updated_at"])
        turns_end_with(actor=actor, fact=memory, when=now)
        memory_audit(
            actor=actor, action="memory.end", memory=memory, details={"from_status": previous}
        )
    return memory


def memory_merge(*, actor: Actor, keep: Memory, other: Memory) -> Memory:
    """Merge a duplicate pair: `keep` stays current; `other` is superseded by it (ended, kept
    as history, linked both ways). Both must be current memories of the same subject."""
    if keep.pk == other.pk:
        raise ApplicationError(gettext_noop("A memory cannot be merged with itself."))
    if keep.subject_id != other.subject_id or keep.namespace_id != other.namespace_id:
        raise ApplicationError(gettext_noop("Only memories of the same subject can be merged."))
    with transaction.atomic():
        keep, other = _locked(keep), _locked(other)
        if keep.valid_to is not None or other.valid_to is not None:
            raise ApplicationError(
                gettext_noop("Both memories must be current to merge."), status_code=409
            )
        now = timezone.now()
        # The turns of a duplicate stay current: they state what `keep` states.
        other.valid_to = now
        other.superseded_by_id = keep.id
        other.metadata = {**other.metadata, "merged": True}
        other.updated_at = now
        other.save(update_fields=["valid_to", "superseded_by", "metadata", "updated_at"])
        supersedes = [*keep.metadata.get("supersedes", []), str(other.id)]
        keep.metadata = {**keep.metadata, "supersedes": supersedes}
        keep.importance = max(keep.importance, other.importance)
        keep.updated_at = now
        keep.save(update_fields=["metadata", "importance", "updated_at"])
        memory_audit(
            actor=actor, action="memory.merge", memory=keep, details={"merged": str(other.id)}
        )
    return keep


def memory_supersede_rollback(*, actor: Actor, memory: Memory) -> Memory:
    """Undo a supersede: the ended fact `memory` is current again, and the successor that
    ended it (if any, and still current) is archived. One audit event names both."""
    if memory.valid_to is None:
        raise ApplicationError(gettext_noop("This memory was not superseded."), status_code=409)
    with transaction.atomic():
        memory = _locked(memory)
        successor_id = memory.superseded_by_id
        archived = None
        if successor_id:
            successor = Memory.objects.select_for_update().filter(
                pk=successor_id, namespace=memory.namespace_id, valid_to__isnull=True
            )
            if successor.update(status=Status.ARCHIVED, updated_at=timezone.now()):
                archived = str(successor_id)
        now = timezone.now()
        memory.valid_to = None
        memory.superseded_by_id = None
        memory.metadata = {
            key: value
            for key, value in memory.metadata.items()
            if key not in ("ended", "ended_by", "merged")
        } | {"reviewed_at": now.isoformat()}
        memory.status = Status.ACTIVE
        memory.updated_at = now
        memory.save(update_fields=["valid_to", "superseded_by", "metadata", "status", "updated_at"])
        turns_reopen_with(actor=actor, fact=memory, when=now)
        memory_audit(
            actor=actor,
            action="memory.supersede_rollback",
            memory=memory,
            details={"archived_successor": archived},
        )
    return memory


BULK_ACTIONS = ("archive", "tag", "delete")


@dataclass(frozen=True)
class BulkOutcome:
    action: str
    count: int
    audit_event_id: int


def memories_bulk_change(
    *,
    actor: Actor,
    namespace: Namespace,
    memories: QuerySet[Memory],
    action: str,
    reason: str,
    tag: str = "",
) -> BulkOutcome:
    """Archive, tag or delete every memory of `memories` (already scoped to `namespace` by
    the caller's selector) in one transaction, with one content-free audit event (the count,
    the subjects touched, the reason). Deleted memories are counted after the commit
    (`via="bulk"`)."""
    if action not in BULK_ACTIONS:
        raise ApplicationError(
            gettext_noop("Unknown bulk action."), details={"action": ["unknown action"]}
        )
    if not reason.strip():
        raise ApplicationError(gettext_noop("Give a reason."), details={"reason": ["required"]})
    tag = tag.strip()
    if action == "tag" and not tag:
        raise ApplicationError(gettext_noop("Name the tag to add."), details={"tag": ["required"]})
    if len(tag) > 64:
        raise ApplicationError(
            gettext_noop("A tag has at most 64 characters."), details={"tag": ["too long"]}
        )
    with transaction.atomic():
        scoped = memories.filter(namespace=namespace)
        ids = list(scoped.select_for_update(of=("self",)).values_list("id", flat=True))
        subjects = scoped.exclude(subject=None).values("subject").distinct().count()
        rows = Memory.objects.filter(pk__in=ids)
        now = timezone.now()
        details: dict[str, Any] = {"count": len(ids), "subjects": subjects, "reason": reason[:200]}
        if action == "archive":
            rows.update(status=Status.ARCHIVED, updated_at=now)
        elif action == "tag":
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {Memory._meta.db_table} SET tags = array_append(tags, %s),"  # noqa: S608
                    " updated_at = %s WHERE id = ANY(%s) AND NOT (%s = ANY(tags))",
                    [tag, now, ids, tag],
                )
            details["tag"] = tag
        else:
            purged = _delete(namespace, ids)
            details.update(purged)
            metrics.count_purged_memories(via="bulk", memories=purged["memories"])
        event = audit_record(
            actor=actor,
            action=f"memory.bulk_{action}",
            namespace=namespace,
            object_type="memory",
            details=details,
        )
    return BulkOutcome(action=action, count=len(ids), audit_event_id=event.pk)


def memories_purge_batch(
    *, namespace: Namespace, ids: Sequence[uuid.UUID], via: str
) -> dict[str, int]:
    """Delete these memories of the namespace with their versions, and take them out of the
    recall log (a row left naming none is deleted). Writes no audit event: the purge job's
    receipt counts every batch. Counted after the commit, labelled `via` (one of
    metrics.PURGED_VIA). Returns the counts."""
    with transaction.atomic():
        counts = _delete(namespace, ids)
        metrics.count_purged_memories(via=via, memories=counts["memories"])
        return counts


def _delete(namespace: Namespace, ids: Sequence[uuid.UUID]) -> dict[str, int]:
    ids = list(ids)
    if not ids:
        return {"memories": 0, "versions": 0, "recall_log_rows": 0}
    rows = list(
        Memory.objects.filter(namespace=namespace, pk__in=ids).only(
            "id", "namespace_id", "subject_id", "session_key", "position"
        )
    )
    if not rows:
        return {"memories": 0, "versions": 0, "recall_log_rows": 0}
    # In the ledger before the commit: a restore of an older backup deletes them again.
    erasure_ledger.append(
        namespace_id=namespace.pk, scope="memories", memory_ids=[row.pk for row in rows]
    )
    versions = MemoryVersion.objects.filter(memory__in=rows).count()
    # A recall-log row naming only purged memories goes; one naming others too loses these.
    # (A row of a recall that found nothing names none and stays.)
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {RECALL_LOG_TABLE} WHERE namespace_id = %s"  # noqa: S608
            " AND memory_ids && %s::uuid[] AND memory_ids <@ %s::uuid[]",
            [namespace.pk, ids, ids],
        )
        touched = cursor.rowcount
        cursor.execute(
            f"UPDATE {RECALL_LOG_TABLE} SET memory_ids = ARRAY("  # noqa: S608
            "SELECT i FROM unnest(memory_ids) AS i WHERE i <> ALL(%s::uuid[]))"
            " WHERE namespace_id = %s AND memory_ids && %s::uuid[]",
            [ids, namespace.pk, ids],
        )
        touched += cursor.rowcount
    Memory.objects.filter(pk__in=[row.pk for row in rows]).delete()
    refresh_neighbour_context([row for row in rows if row.session_key])
    return {"memories": len(rows), "versions": versions, "recall_log_rows": touched}
