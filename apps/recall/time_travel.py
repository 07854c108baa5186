"""Time travel: the moment a recall or a context is asked `as_of`.

What is served as of a moment is what was recorded by then and valid then (its `valid_from`
at or before it, its `valid_to` unset or after it), not expired then, with the text of the
version current then (`search.recall_memories`). What a person or an admin removed since
(erased, deleted, archived) never comes back: time travel reads the rows that are still
there.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_noop

from apps.memories.embeddings import get_provider
from apps.memories.models import Memory, MemoryVersion
from apps.memories.multilingual import get_multilingual_provider
from apps.memories.row_encryption import KeyCache, open_version
from memoryhub.exceptions import ApplicationError

# A question about what held before ("where did she live before the move?", "他以前在哪里
# 上班"): its recall searches history too, ranked with what holds and marked as history.
_PAST = re.compile(
    r"\b(?:before|used to|previous(?:ly)?|former(?:ly)?|originally|at first|earlier|prior"
    r"|back then|no longer|any ?more)\b"
    r"|以前|之前|原先|原来|过去|曾经|从前|前后|早先|当初|先前",
    re.IGNORECASE,
)

# A clock a little ahead of the server's is no reason to refuse; a moment further ahead is.
FUTURE_SLACK = timedelta(minutes=1)


def asks_about_the_past(query: str) -> bool:
    """Whether the question asks what held before (`_PAST`): its answer may be history."""
    return _PAST.search(query) is not None


def as_of_parse(value: object, *, now: datetime) -> datetime | None:
    """The moment `value` names (ISO 8601 with a timezone), or None for none given.
    ApplicationError (400, code `invalid_as_of`) for a value that does not parse, has no
    timezone, or lies more than FUTURE_SLACK after `now`."""
    if value is None or value == "":
        return None
    moment = _parsed(value)
    if moment is None:
        raise _refused(gettext_noop("as_of is not an ISO 8601 date and time."), "unparsable")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise _refused(
            gettext_noop("as_of needs a timezone (for example 2026-03-03T12:00:00Z)."),
            "no timezone",
        )
    if moment > now + FUTURE_SLACK:
        raise _refused(gettext_noop("as_of is in the future."), "in the future")
    return moment


def _parsed(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return parse_datetime(value.strip())
    except ValueError:  # well formed, but no such date (2026-02-30)
        return None


def _refused(message: str, problem: str) -> ApplicationError:
    return ApplicationError(
        message, code="invalid_as_of", details={"as_of": [problem]}, status_code=400
    )


@dataclass(frozen=True)
class Then:
    """A memory as it read at the moment asked: the version current then."""

    version: int
    text: str


def versions_then(memories: dict[int, Memory], as_of: datetime, keys: KeyCache) -> dict[int, Then]:
    """For the candidates (by index) edited after `as_of`, the version each had then (the
    newest stored by then), decrypted. Candidates not edited since are left out: their
    stored text is the text then."""
    edited = {
        i: memory
        for i, memory in memories.items()
        if memory.version > 1 and memory.updated_at > as_of
    }
    if not edited:
        return {}
    newest: dict[uuid.UUID, MemoryVersion] = {}
    for version in MemoryVersion.objects.filter(
        memory_id__in=[memory.pk for memory in edited.values()], created_at__lte=as_of
    ).order_by("memory_id", "-version"):
        newest.setdefault(version.memory_id, version)
    found: dict[int, Then] = {}
    for i, memory in edited.items():
        kept = newest.get(memory.pk)
        if kept is not None and kept.version != memory.version:
            text = open_version(keys, kept, memory.subject_id, memory.namespace_id)
            found[i] = Then(kept.version, text)
    return found


def rescore_then(rows: list[dict[str, Any]], then: dict[int, Then], vectors: Any) -> None:
    """Compare the query with the vector of each memory's text then, recomputed by the model
    that compares it now (`statements.QueryVectors`): the similarity the database gave was
    of its current text. Keyword counts stay those of the current text."""
    if not then:
        return
    primary, multilingual = get_provider(), get_multilingual_provider()
    by_model: dict[str, list[int]] = {}
    for i in then:
        use_primary = vectors.primary is not None and (
            vectors.multilingual is None or rows[i]["latin_script"]
        )
        by_model.setdefault("primary" if use_primary else "multilingual", []).append(i)
    for model, indexes in by_model.items():
        provider, query = (
            (primary, vectors.primary)
            if model == "primary"
            else (multilingual, vectors.multilingual)
        )
        if provider is None or query is None:
            continue
        embedded = provider.embed_documents([then[i].text for i in indexes])
        for i, vector in zip(indexes, embedded, strict=True):
            rows[i]["vector_similarity"] = _cosine(np.asarray(query), np.asarray(vector))


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norms) if norms else 0.0
