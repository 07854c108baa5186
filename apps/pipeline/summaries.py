"""Sessions' rolling summaries: the summarizer in use and the next summary version."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings

from apps.memories.row_encryption import KeyCache, open_field, open_row, seal_field, seal_row
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
        namespace_id=session.namespace_id,
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
DIGEST = "digest"  # the field a summary's digest is bound to


def _session_summary_whole(
    *, keys: KeyCache, session: Session, latest: SessionSummary | None, summarizer: Any
) -> SessionSummary | None:
    """The next version, for a summarizer that is not rolling (the offline one: cheap, and
    a fact's current value needs every turn that changed it). From the newest version's
    digest and the turns since it, when it has one; else from the session's turns (its
    newest WHOLE_SESSION_TURNS). Either way the new version keeps the digest, and the one
    before it no longer does.

    A session sent a turn at a time used to be read whole by each job: 450 ms of a 565 ms
    job by its 300th turn (an AMD EPYC, 2 cores), growing with every turn."""
    digest = _digest_of(keys, session, latest, summarizer)
    rows: list[Message] = []
    if digest is not None and latest is not None:
        rows = list(
            session.messages.filter(position__gt=latest.through_position).order_by("position")[
                : WHOLE_SESSION_TURNS + 1
            ]
        )
        if not rows:
            return latest
        if len(rows) > WHOLE_SESSION_TURNS:  # more than a whole session's worth: start over
            digest = None
    if digest is None:
        # Read again, even where the newest turn's position is not past the newest version's:
        # a deleted turn's position is given to the next one.
        rows = list(session.messages.order_by("-position")[:WHOLE_SESSION_TURNS])[::-1]
        if not rows:
            return latest
        digest = extraction.SummaryDigest()
    text = summarizer.extend(digest, _turns(keys, session, rows))
    if not text:
        return latest
    summary = SessionSummary(
        namespace_id=session.namespace_id,
        session=session,
        version=(latest.version + 1) if latest else 1,
        through_position=rows[-1].position,
        summarizer=summarizer.name,
    )
    seal_row(keys, summary, session.namespace_id, session.subject_id, text)
    summary.digest_encrypted = seal_field(
        keys, summary, session.namespace_id, session.subject_id, DIGEST, digest.to_json()
    )
    summary.save()
    if latest is not None and latest.digest_encrypted is not None:
        SessionSummary.objects.filter(pk=latest.pk).update(digest_encrypted=None)
    return summary


def _digest_of(
    keys: KeyCache, session: Session, latest: SessionSummary | None, summarizer: Any
) -> extraction.SummaryDigest | None:
    """The newest version's digest, if it has one and this summarizer made it."""
    if latest is None or latest.digest_encrypted is None or latest.summarizer != summarizer.name:
        return None
    return extraction.SummaryDigest.from_json(
        open_field(
            keys,
            latest,
            session.namespace_id,
            session.subject_id,
            DIGEST,
            latest.digest_encrypted,
        )
    )


def session_summaries_forget(*, turns: Iterable[Message]) -> int:
    """Delete the summary versions made from any of these turns (about to be deleted: what
    they said must live on in no summary, nor in the digest of one). A session's newest
    version left, if any, is one made before them; the next job summarises the turns left.
    Returns how many versions were deleted."""
    first: dict[Any, int] = {}
    for turn in turns:
        first[turn.session_id] = min(turn.position, first.get(turn.session_id, turn.position))
    deleted = 0
    for session_id, position in first.items():
        deleted += SessionSummary.objects.filter(
            session_id=session_id, through_position__gte=position
        ).delete()[0]
    return deleted
