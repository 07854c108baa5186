"""Partial HNSW indexes of large subjects: made, kept, served to recall, dropped.

Transactional: the indexes are built CONCURRENTLY, which cannot run in a transaction.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.audit.actors import Actor
from apps.memories.models import Subject
from apps.memories.services import NewMemory, memories_create_bulk, subject_erase
from apps.recall import search as recall_module
from apps.recall import subject_indexes
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db(transaction=True)
ACTOR = Actor.system("tests")


@pytest.fixture(autouse=True)
def _no_subject_indexes_left() -> Iterator[None]:
    yield
    for name in _indexes():
        with connection.cursor() as cursor:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')


def _indexes() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memories_memory'"
            " AND indexname LIKE %s ORDER BY indexname",
            [subject_indexes.PREFIX + "%"],
        )
        return [name for (name,) in cursor.fetchall()]


def _write(tenant: Tenant, external_id: str, count: int) -> Subject:
    memories_create_bulk(
        actor=ACTOR,
        namespace=tenant.namespace,
        items=[
            NewMemory(subject_external_id=external_id, content=f"{external_id} note {n} on birds")
            for n in range(count)
        ],
    )
    return Subject.objects.get(namespace=tenant.namespace, external_id=external_id)


def test_a_large_subject_gets_an_index_that_recall_uses_until_the_subject_is_erased(
    acme: Tenant, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.MEMORYHUB_SUBJECT_INDEX_MIN = 40
    big = _write(acme, "big", 60)
    _write(acme, "small", 10)
    name = subject_indexes.index_name(big.pk)

    preview = subject_indexes.refresh(dry_run=True)
    assert preview.created == [name]
    assert _indexes() == []

    made = subject_indexes.refresh()
    assert made.created == [name]
    assert _indexes() == [name]
    again = subject_indexes.refresh()
    assert (again.created, again.dropped, again.kept) == ([], [], [name])

    # The recall's subject branch names the subject: the planner can serve it by the
    # subject's index (sorting forbidden here, to see that the index's condition is proven).
    monkeypatch.setattr(recall_module, "EXACT_SCAN_DOCUMENTS", 0)
    with CaptureQueriesContext(connection) as queries:
        outcome = recall_module.recall_memories(
            actor=ACTOR, namespace=acme.namespace, subject_external_id="big", query="birds", k=5
        )
    assert len(outcome.hits) == 5
    # The first search (an exact one may follow should the walk come back short).
    statement = next(q["sql"] for q in queries.captured_queries if "<=>" in q["sql"])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + statement)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert name in plan, plan

    subject_erase(actor=ACTOR, subject=big)
    gone = subject_indexes.refresh()
    assert gone.dropped == [name]
    assert _indexes() == []


def test_only_the_largest_subjects_get_one_and_never_inside_a_transaction(
    acme: Tenant, settings
) -> None:
    settings.MEMORYHUB_SUBJECT_INDEX_MIN = 10
    settings.MEMORYHUB_SUBJECT_INDEX_MAX = 1
    _write(acme, "medium", 12)
    large = _write(acme, "large", 20)
    assert subject_indexes.refresh().created == [subject_indexes.index_name(large.pk)]
    with transaction.atomic(), pytest.raises(RuntimeError):
        subject_indexes.refresh()
