"""Reads of sessions, their turns and summaries, and jobs, within a namespace the caller
was authorised for; anything outside it is NotFound, like something that never existed."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Prefetch
from django.utils.translation import gettext_noop

from apps.accounts.models import ApiKey
from apps.memories.models import Subject
from apps.memories.row_encryption import KeyCache, open_row
from apps.pipeline.models import Job, Message, MessageRole, Session, SessionSummary
from memoryhub.exceptions import NotFound


def session_for_subject(*, subject: Subject, external_id: str) -> Session | None:
    return Session.objects.filter(subject=subject, external_id=external_id).first()


def session_recent_turns(*, session: Session, limit: int) -> list[Message]:
    """The newest `limit` user and assistant turns of a session, oldest first."""
    newest = session.messages.filter(role__in=[MessageRole.USER, MessageRole.ASSISTANT])
    return list(reversed(newest.order_by("-position")[:limit]))


def session_summary_latest(*, session: Session) -> SessionSummary | None:
    """The session's summary: its newest version, or None before the first."""
    return session.summaries.order_by("-version").first()


def session_summary_through(*, session: Session, position: int) -> SessionSummary | None:
    """The newest summary version that covers no turn after `position`."""
    return session.summaries.filter(through_position__lte=position).order_by("-version").first()


def subject_sessions_export(keys: KeyCache, subject: Subject) -> list[dict[str, Any]]:
    """The subject's conversations for its export: every session with its turns and newest
    summary, decrypted (registered as the export's "sessions" part)."""
    sessions = []
    # Three queries in all, however many sessions: their messages and summaries come along.
    found = (
        Session.objects.filter(subject=subject)
        .order_by("created_at", "id")
        .prefetch_related(
            Prefetch("messages", queryset=Message.objects.order_by("position")),
            Prefetch("summaries", queryset=SessionSummary.objects.order_by("-version")),
        )
    )
    for session in found:
        summary = next(iter(session.summaries.all()), None)  # the newest version
        sessions.append(
            {
                "session": session.external_id,
                "created_at": session.created_at.isoformat(),
                "messages": [
                    {
                        "position": m.position,
                        "role": m.role,
                        "name": m.name,
                        "content": open_row(keys, m, subject.namespace_id, subject.pk),
                        "created_at": m.created_at.isoformat(),
                    }
                    for m in session.messages.all()
                ],
                "summary": None
                if summary is None
                else {
                    "version": summary.version,
                    "content": open_row(keys, summary, subject.namespace_id, subject.pk),
                    "through_position": summary.through_position,
                    "created_at": summary.created_at.isoformat(),
                },
            }
        )
    return sessions


def job_for_api_key(*, api_key: ApiKey, job_id: uuid.UUID | str) -> Job:
    """A job in one of the key's namespaces; anything else is not found."""
    try:
        job_uuid = uuid.UUID(str(job_id))
    except ValueError:
        raise NotFound(gettext_noop("Job not found.")) from None
    job = (
        Job.objects.filter(pk=job_uuid, namespace__in=api_key.namespaces.all())
        .select_related("namespace", "subject")
        .first()
    )
    if job is None:
        raise NotFound(gettext_noop("Job not found."))
    return job


@dataclass(frozen=True)
class ExtractorInUse:
    """Which extractor turns a namespace's conversations into facts (every namespace of the
    deployment runs the same one): "offline" (the rules of apps/facts) or "llm", with the
    model and the endpoint's host (never its key or path)."""

    kind: str
    model: str = ""
    host: str = ""


def extractor_in_use() -> ExtractorInUse:
    if settings.MEMORYHUB_EXTRACTOR != "llm":
        return ExtractorInUse("offline")
    host = urlsplit(settings.MEMORYHUB_LLM_URL or "").hostname or ""
    return ExtractorInUse("llm", settings.MEMORYHUB_LLM_MODEL or "", host)
