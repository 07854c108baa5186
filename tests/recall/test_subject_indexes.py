"""Partial HNSW indexes of large subjects: made, kept, served to recall, dropped.

Transactional: the indexes are built CONCURRENTLY, which cannot run in a transaction.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from apps.audit.actors import Actor
from apps.memories.models import Memory, Subject
from apps.memories.services import (
    NewMemory,
    memories_create_bulk,
    memory_archive,
    memory_delete,
    subject_erase,
)
from apps.recall import search as recall_module
from apps.recall import subject_indexes
from tests.conftest import Tenant
from tests.recall.plans import plan_of, recorded_statements

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
    with recorded_statements() as statements:
        outcome = recall_module.recall_memories(
            recall_module.RecallRequest(
                actor=ACTOR, namespace=acme.namespace, subject_external_id="big", query="birds", k=5
            )
        )
    assert len(outcome.hits) == 5
    # The first search (an exact one may follow should the walk come back short), planned
    # for its values as the recall bound them: the subject is a value, not in the text.
    sql, params = next((sql, params) for sql, params in statements if "<=>" in sql)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_sort = off")
        plan = plan_of(sql, params)
    assert name in plan, plan

    subject_erase(actor=ACTOR, subject=big, via="api")
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


# --- a subject that shrinks loses its index (below half the minimum, not before) ------------


def _grown(tenant: Tenant, settings, count: int = 12) -> tuple[Subject, str]:
    """A subject of `count` memories with its index made, at a minimum of 10."""
    settings.MEMORYHUB_SUBJECT_INDEX_MIN = 10
    subject = _write(tenant, "shrinking", count)
    name = subject_indexes.index_name(subject.pk)
    assert subject_indexes.refresh().created == [name]
    return subject, name


def _delete(subject: Subject, count: int) -> None:
    for memory in Memory.objects.filter(subject=subject).order_by("created_at")[:count]:
        memory_delete(actor=ACTOR, memory=memory)


def test_a_subject_that_shrinks_below_half_the_minimum_loses_its_index(
    acme: Tenant, settings
) -> None:
    subject, name = _grown(acme, settings)
    _delete(subject, 8)  # 4 left, under 10 // 2
    outcome = subject_indexes.refresh()
    assert (outcome.created, outcome.dropped, outcome.kept) == ([], [name], [])
    assert _indexes() == []
    again = subject_indexes.refresh()
    assert (again.created, again.dropped, again.kept) == ([], [], [])


def test_a_subject_that_keeps_half_the_minimum_keeps_its_index(acme: Tenant, settings) -> None:
    subject, name = _grown(acme, settings)
    _delete(subject, 7)  # 5 left: half of 10, not below it
    outcome = subject_indexes.refresh()
    assert (outcome.created, outcome.dropped, outcome.kept) == ([], [], [name])
    assert _indexes() == [name]


def test_archived_memories_no_longer_count_for_a_subjects_index(acme: Tenant, settings) -> None:
    subject, name = _grown(acme, settings)
    for memory in Memory.objects.filter(subject=subject)[:8]:
        memory_archive(actor=ACTOR, memory=memory)
    assert subject_indexes.refresh().dropped == [name]
    assert _indexes() == []


def test_a_dry_run_reports_the_drop_and_keeps_the_index(acme: Tenant, settings) -> None:
    subject, name = _grown(acme, settings)
    _delete(subject, 8)
    assert subject_indexes.refresh(dry_run=True).dropped == [name]
    assert _indexes() == [name]
    assert subject_indexes.refresh().dropped == [name]
    assert _indexes() == []


def test_raising_the_minimum_drops_an_index_the_subject_no_longer_earns(
    acme: Tenant, settings
) -> None:
    _, name = _grown(acme, settings)
    settings.MEMORYHUB_SUBJECT_INDEX_MIN = 30  # 12 memories: under 30 // 2
    assert subject_indexes.refresh().dropped == [name]
    assert _indexes() == []


# --- manage.py subject_indexes [--dry-run] --------------------------------------------------


def _command(*args: str) -> dict:
    out = io.StringIO()
    call_command("subject_indexes", *args, stdout=out)
    return json.loads(out.getvalue())


def test_the_command_previews_with_dry_run_then_creates_printing_json(
    acme: Tenant, settings
) -> None:
    settings.MEMORYHUB_SUBJECT_INDEX_MIN = 10
    name = subject_indexes.index_name(_write(acme, "big", 12).pk)
    _write(acme, "small", 3)
    preview = _command("--dry-run")
    assert (preview["created"], preview["dropped"], preview["kept"]) == ([name], [], [])
    assert _indexes() == []
    made = _command()
    assert (made["created"], made["dropped"], made["kept"]) == ([name], [], [])
    assert _indexes() == [name]
    assert _command("--dry-run")["kept"] == [name]


def test_the_command_previews_a_drop_without_dropping(acme: Tenant, settings) -> None:
    subject, name = _grown(acme, settings)
    _delete(subject, 8)
    assert _command("--dry-run")["dropped"] == [name]
    assert _indexes() == [name]
