"""Sessions' rolling summaries: the summarizer in use and the next summary version."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings

from apps.memories.row_encryption import KeyCache, open_row, seal_row
from apps.pipeline import extraction
from apps.pipeline.models import (
    Message,
    Session,
    SessionSummary,
)
from apps.pipeline.selectors import session_summary_latest

logger = logging.getLogger(__name__)


def get_summarizer() -> Any:
    words = settings.MEMORYHUB_SUMMARY_WORDS
    if settings.MEMORYHUB_SUMMARIZER == "llm":
        from apps.pipeline.llm import LlmClient, LlmSummarizer

        return LlmSummarizer(LlmClient.from_settings(), words=words)
    return extraction.OfflineSummarizer(words=words)


def session_summary_update(
    *, keys: KeyCache, session: Session, summarizer: Any
) -> SessionSummary | None:
    """The session's next summary version: the previous summary rolled forward over the
    turns since it (only those are read and decrypted; encrypted under the subject's key)."""
    latest = session_summary_latest(session=session)
    since = latest.through_position if latest is not None else -1
    if not getattr(summarizer, "rolling", True):
        return _session_summary_whole(
            keys=keys, session=session, latest=latest, summarizer=summarizer
        )
    new_turns = _turns(
        keys, session, session.messages.filter(position__gt=since).order_by("position")
    )
    if not new_turns:
        return latest
    previous = open_row(keys, latest, session.namespace_id, session.subject_id) if latest else ""
    text = summarizer.summarize(new_turns, previous)
    if not text or (latest is not None and text == previous):
        return latest
    summary = SessionSummary(
        session=session,
        version=(latest.version + 1) if latest else 1,
        through_position=max(t.position for t in new_turns),
        summarizer=summarizer.name,
    )
    seal_row(keys, summary, session.namespace_id, session.subject_id, text)
    summary.save()
    return summary


def _turns(keys: KeyCache, session: Session, rows: Iterable[Message]) -> list[extraction.Turn]:
    return [
        extraction.Turn(
            role=m.role,
            content=open_row(keys, m, session.namespace_id, session.subject_id),
            position=m.position,
            name=m.name,
            created_at=m.created_at,
        )
        for m in rows
    ]


WHOLE_SESSION_TURNS = 1000  # a summarizer that reads the whole session reads this many at most


def _session_summary_whole(
    *, keys: KeyCache, session: Session, latest: SessionSummary | None, summarizer: Any
) -> SessionSummary | None:
    """The next version from the session's turns (its newest WHOLE_SESSION_TURNS), for a
    summarizer that is not rolling (the offline one: cheap, and a fact's current value needs
    every turn that changed it)."""
    rows = list(session.messages.order_by("-position")[:WHOLE_SESSION_TURNS])[::-1]
    if not rows or (latest is not None and rows[-1].position <= latest.through_position):
        return latest
    turns = _turns(keys, session, rows)
    text = summarizer.summarize(turns)
    if not text:
        return latest
    summary = SessionSummary(
        session=session,
        version=(latest.version + 1) if latest else 1,
        through_position=rows[-1].position,
        summarizer=summarizer.name,
    )
    seal_row(keys, summary, session.namespace_id, session.subject_id, text)
    summary.save()
    return summary
