"""The token-array and embedding fields: what they store is exactly what they were given."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import transaction

from apps.audit.actors import Actor
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memory_create
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


@pytest.fixture
def memory(acme: Tenant) -> Memory:
    return memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u1", content="A memory"),
    )


@pytest.mark.django_db
def test_a_float32_embedding_round_trips_exactly(memory: Memory) -> None:
    rng = np.random.default_rng(7)
    vector = rng.standard_normal(384).astype(np.float32)
    vector[:4] = [1e-38, -3.4e38, 0.0, 0.1]  # extremes, zero, an inexact decimal
    Memory.objects.filter(pk=memory.pk).update(embedding=vector, context_embedding=vector / 2)
    stored = Memory.objects.get(pk=memory.pk)
    assert np.array_equal(np.asarray(stored.embedding, dtype=np.float32), vector)
    assert np.array_equal(np.asarray(stored.context_embedding, dtype=np.float32), vector / 2)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "terms",
    [[5, -7, 2**31 - 1, -(2**31)], np.asarray([5, -7, 9], dtype=np.int64), (3, 3), []],
)
def test_term_arrays_take_lists_tuples_and_numpy_arrays(
    memory: Memory, terms: list[int] | tuple[int, ...] | np.ndarray
) -> None:
    Memory.objects.filter(pk=memory.pk).update(token_index=terms, context_index=terms)
    stored = Memory.objects.get(pk=memory.pk)
    assert stored.token_index == stored.context_index == [int(term) for term in terms]
    assert Memory.objects.filter(pk=memory.pk, token_index__contains=list(terms)).exists()


@pytest.mark.django_db
def test_a_term_that_is_not_an_integer_is_refused(memory: Memory) -> None:
    with pytest.raises(TypeError), transaction.atomic():
        Memory.objects.filter(pk=memory.pk).update(token_index=[1, 2.5])
    assert Memory.objects.get(pk=memory.pk).token_index == memory.token_index
