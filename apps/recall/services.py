"""Writes of recall: the recall log (which memories were served to whom), and feedback on
what it served."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories.models import Subject
from apps.memories.row_encryption import KeyCache, open_row, seal_row
from apps.namespaces.models import Namespace
from apps.recall.models import RecallFeedback, RecallLog
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.replica import bookkeeping


@dataclass(frozen=True)
class NewRecallLog:
    """One recall to account for: which memories (`memory_ids`) were served about `subject`
    (None: shared memories only), for what `purpose`; its timing, its size in tokens and its
    query when known."""

    subject: Subject | None
    memory_ids: list[uuid.UUID]
    purpose: str
    duration_ms: float | None = None
    tokens: int | None = None
    query: str | None = None


def recall_log_create(
    *,
    actor: Actor,
    namespace: Namespace,
    entry: NewRecallLog,
    keys: KeyCache | None = None,
) -> RecallLog:
    """Record which memories were served to whom (ids; the query encrypted, when given, for
    eval cases; no content). Not an audit event: reads are accounted here, at the memory
    level, erased with the subject. Bookkeeping: the recall's client may go on reading from a
    replica (memoryhub/replica.py)."""
    log = RecallLog(
        namespace=namespace,
        subject=entry.subject,
        purpose=entry.purpose,
        actor_type=actor.type,
        actor_id=actor.id,
        request_id=actor.request_id,
        memory_ids=entry.memory_ids,
        duration_ms=entry.duration_ms,
        tokens=entry.tokens,
    )
    if entry.query and settings.MEMORYHUB_RECALL_QUERY_DAYS > 0:
        seal_row(keys or KeyCache(), log, namespace.pk, log.subject_id, entry.query)
    with bookkeeping():
        log.save(force_insert=True)
    return log


def recall_query(*, log: RecallLog, keys: KeyCache | None = None) -> str | None:
    """The query of a logged recall, if it is still kept."""
    if log.content_encrypted is None:
        return None
    return open_row(keys or KeyCache(), log, log.namespace_id, log.subject_id)


def recall_queries_forget(*, now: datetime | None = None) -> int:
    """Forget the queries of recalls older than MEMORYHUB_RECALL_QUERY_DAYS (on beat)."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.MEMORYHUB_RECALL_QUERY_DAYS)
    return RecallLog.objects.filter(created_at__lt=cutoff, content_encrypted__isnull=False).update(
        content_encrypted=None, key_version=None
    )


FEEDBACK_NOTE_LIMIT = 2000  # characters


def recall_feedback_give(
    *,
    actor: Actor,
    namespace: Namespace,
    recall_id: str,
    memory_id: str,
    relevant: bool,
    note: str = "",
) -> RecallFeedback:
    """Say whether a memory a recall served was relevant to it. The recall must be the
    namespace's (otherwise: not found) and must have served the memory. Given again by the
    same actor, it replaces the earlier judgement. The note is encrypted; the audit event
    says only whether there was one."""
    try:
        recall = RecallLog.objects.get(namespace=namespace, pk=uuid.UUID(str(recall_id)))
    except (ValueError, RecallLog.DoesNotExist):
        raise NotFound(gettext_noop("No such recall.")) from None
    try:
        memory = uuid.UUID(str(memory_id))
    except ValueError:
        raise ApplicationError(
            gettext_noop("memory_id is not a memory id."), details={"memory_id": ["not a UUID"]}
        ) from None
    if memory not in recall.memory_ids:
        raise ApplicationError(
            gettext_noop("This recall did not serve that memory."),
            details={"memory_id": ["not served"]},
        )
    note = (note or "").strip()
    if len(note) > FEEDBACK_NOTE_LIMIT or "\x00" in note:
        raise ApplicationError(
            gettext_noop("A note has at most %(limit)s characters."),
            params={"limit": FEEDBACK_NOTE_LIMIT},
            details={"note": ["too long"]},
        )
    keys = KeyCache()
    now = timezone.now()
    with transaction.atomic():
        feedback = (
            RecallFeedback.objects.select_for_update()
            .filter(recall=recall, memory_id=memory, actor_type=actor.type, actor_id=actor.id[:64])
            .first()
        ) or RecallFeedback(
            namespace=namespace,
            subject_id=recall.subject_id,
            recall=recall,
            memory_id=memory,
            actor_type=actor.type,
            actor_id=actor.id[:64],
            created_at=now,
        )
        feedback.relevant = relevant
        feedback.updated_at = now
        seal_row(keys, feedback, namespace.pk, recall.subject_id, note)
        feedback.save()
        audit_record(
            actor=actor,
            action="recall.feedback",
            namespace=namespace,
            subject_id=recall.subject_id,
            object_type="recall",
            object_id=str(recall.pk),
            details={"memory_id": str(memory), "relevant": relevant, "note": bool(note)},
        )
    return feedback
