"""Reads of sessions, their turns and summaries, and jobs, within a namespace the caller
was authorised for; anything outside it is NotFound, like something that never existed."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Count, Prefetch
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.accounts.models import ApiKey
from apps.memories.models import Subject
from apps.memories.row_encryption import KeyCache, open_row
from apps.namespaces.models import Namespace
from apps.pipeline import llm_health
from apps.pipeline.extractors import extractor_mode
from apps.pipeline.models import Job, JobStatus, Message, MessageRole, Session, SessionSummary
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
    """Which extractor turns a namespace's conversations into facts: "offline" (the rules of
    apps/facts), "llm", or "both" (the rules, then the LLM on what they left unresolved);
    with the model and the endpoint's host (never its key or path) when it uses the LLM, and
    whether it is the namespace's own choice rather than the server's default."""

    kind: str
    model: str = ""
    host: str = ""
    own: bool = False

    @property
    def uses_llm(self) -> bool:
        return self.kind in ("llm", "both")


def extractor_in_use(namespace: Namespace | None = None) -> ExtractorInUse:
    """The extractor the namespace's jobs run (the server's default without a namespace, or
    when the namespace chose none). Without MEMORYHUB_LLM_URL that is the rules, whatever was
    chosen. Reads settings and the namespace row it is given: no query."""
    mode = extractor_mode(namespace)
    own = namespace is not None and bool(namespace.extractor)
    if mode not in ("llm", "both") or not settings.MEMORYHUB_LLM_URL:
        return ExtractorInUse("offline", own=own)
    host = urlsplit(settings.MEMORYHUB_LLM_URL).hostname or ""
    return ExtractorInUse(mode, settings.MEMORYHUB_LLM_MODEL or "", host, own=own)


@dataclass(frozen=True)
class ExtractorOutage:
    """The LLM extractor a namespace uses cannot be reached: its breaker has been open since
    `since`, and the rules extract meanwhile."""

    since: datetime


def extractor_outage(namespace: Namespace | None = None) -> ExtractorOutage | None:
    """The outage of the LLM extractor the namespace (or the server's default) uses, or None:
    when it uses the rules alone, or the endpoint's breaker is closed. Reads the cache only
    when the LLM is in use; never the database."""
    if not extractor_in_use(namespace).uses_llm:
        return None
    breaker = llm_health.breaker_status()
    if not breaker.open:
        return None
    return ExtractorOutage(since=breaker.since or timezone.now())


def llm_counters() -> llm_health.LlmCounters:
    """The configured LLM endpoint's counters (calls, failures, fallbacks to the rules, facts
    refused by reason, median latency), as every worker counted them; numbers only."""
    return llm_health.counters()


def jobs_unfinished_counts() -> dict[str, int]:
    """How many jobs are queued and how many running, every namespace and kind together: the
    queue depth. One query on the index of unfinished jobs; counts only, unscoped."""
    counts = dict.fromkeys((JobStatus.QUEUED.value, JobStatus.RUNNING.value), 0)
    rows = (
        Job.objects.order_by()
        .filter(status__in=list(counts))
        .values("status")
        .annotate(count=Count("id"))
    )
    counts.update({row["status"]: row["count"] for row in rows})
    return counts
