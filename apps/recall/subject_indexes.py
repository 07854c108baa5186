"""Partial HNSW indexes for the largest subjects.

The HNSW index over every memory serves a subject's search by walking the graph and skipping
other subjects' rows: for a subject with a tenth of the table, that is most of what a recall
costs (p50/p95 11/28 ms against 2.3/3.4 ms through an index of the subject's rows alone, on a
2-core machine with 110k memories). pgvector's advice for a filter on a few distinct values
is a partial index per value; for a filter on many (every subject), partitioning. Only a few
subjects are large, so they get an index each: `refresh` creates one for every subject with
at least `MEMORYHUB_SUBJECT_INDEX_MIN` embedded live memories (the largest
`MEMORYHUB_SUBJECT_INDEX_MAX` of them: each index is one more for the planner to consider
and for writes of that subject to update) and drops those whose subject shrank below half
of that, or is gone. Celery beat runs it; so does `manage.py subject_indexes`.

Recall needs no change: its subject branch names the subject, and the planner picks the
subject's index when there is one. Indexes are built CONCURRENTLY (writes go on meanwhile),
so `refresh` must run outside a transaction.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from apps.memories.models import Memory, Status

logger = logging.getLogger(__name__)

PREFIX = "memory_subject_hnsw_"
MEMORY_TABLE = Memory._meta.db_table


@dataclass
class Refresh:
    created: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    seconds: float = 0.0


def index_name(subject_id: uuid.UUID) -> str:
    return f"{PREFIX}{subject_id.hex}"


def refresh(*, dry_run: bool = False) -> Refresh:
    """Create and drop subject indexes as the subjects' sizes now ask (see the module)."""
    if connection.in_atomic_block:
        raise RuntimeError(
            "Subject indexes are built concurrently: call this outside a transaction."
        )
    started = time.perf_counter()
    minimum = settings.MEMORYHUB_SUBJECT_INDEX_MIN
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT subject_id, count(*) FROM {MEMORY_TABLE}
            WHERE subject_id IS NOT NULL AND status = %s AND valid_to IS NULL
              AND embedding IS NOT NULL
            GROUP BY subject_id HAVING count(*) >= %s
            ORDER BY count(*) DESC, subject_id LIMIT %s
            """,  # noqa: S608 (only the table's name is interpolated)
            [Status.ACTIVE.value, max(minimum // 2, 1), settings.MEMORYHUB_SUBJECT_INDEX_MAX],
        )
        sizes = {index_name(subject_id): (subject_id, count) for subject_id, count in cursor}
    existing = existing_indexes()
    outcome = Refresh()
    for name, valid in sorted(existing.items()):
        if valid and name in sizes:
            outcome.kept.append(name)
        else:
            outcome.dropped.append(name)
            if not dry_run:
                _execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')
    for name, (subject_id, count) in sizes.items():
        if count < minimum or name in outcome.kept:
            continue
        outcome.created.append(name)
        if not dry_run:
            # The subject id comes from the table (a UUID: hex digits and dashes) and the name
            # from it: nothing else is interpolated into this DDL, which takes no parameters.
            _execute(
                f'CREATE INDEX CONCURRENTLY IF NOT EXISTS "{name}" ON {MEMORY_TABLE}'
                " USING hnsw (embedding vector_cosine_ops)"
                f" WHERE subject_id = '{uuid.UUID(str(subject_id))}'::uuid"
            )
    outcome.seconds = round(time.perf_counter() - started, 2)
    if outcome.created or outcome.dropped:
        logger.info(
            "Subject indexes: %d created, %d dropped, %d kept in %.1fs",
            len(outcome.created),
            len(outcome.dropped),
            len(outcome.kept),
            outcome.seconds,
        )
    return outcome


def existing_indexes() -> dict[str, bool]:
    """The subject indexes there are, by name, and whether each is valid (a concurrent build
    that failed leaves an invalid one, which `refresh` builds again)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, i.indisvalid FROM pg_index i
            JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = %s::regclass AND c.relname LIKE %s
            """,
            [MEMORY_TABLE, PREFIX + "%"],
        )
        return dict(cursor.fetchall())


def _execute(sql: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql)
