"""The fill of the multilingual vectors on a real Celery worker (Redis), killed mid-batch: its
batch's vectors roll back, recall keeps to the primary model meanwhile, and the next worker
finishes the fill, which switches recall over in one step. Nothing is lost."""

from __future__ import annotations

import signal

import pytest
from django.core.cache import cache

from apps.audit.actors import Actor
from apps.memories import vector_spaces
from apps.memories.embeddings import SentenceTransformerProvider, set_provider
from apps.memories.models import Memory, VectorColumn, VectorFill
from apps.memories.multilingual import set_multilingual_provider
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import NewMemory, memories_reembed, memory_create
from apps.memories.tasks import reembed
from apps.recall.search import RecallRequest, recall_memories
from tests.conftest import Tenant, stop_process
from tests.embedder import DeterministicEmbedder
from tests.pipeline.test_worker import (  # noqa: F401
    blocker_connection,
    broker,
    start_worker,
    wait_for,
    waits_on_a_lock,
)

ACTOR = Actor.system("tests")
FACTS = [
    f"用户的第{n}个爱好是集邮。" if n % 2 else f"The user's hobby number {n}." for n in range(12)
]


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_s_fill_is_finished_by_the_next_and_serves_only_once_complete(
    acme: Tenant,
    broker: tuple[str, str],  # noqa: F811
    use_multilingual: object,
) -> None:
    redis_url, queue = broker
    # The worker's primary model is the default one; the memories hold vectors under its
    # name (made here by the deterministic embedder: only the multilingual fill runs).
    primary = DeterministicEmbedder()
    primary.name = SentenceTransformerProvider().name  # the name only: nothing loads
    set_provider(primary)
    for fact in FACTS:
        memory_create(
            actor=ACTOR,
            namespace=acme.namespace,
            item=NewMemory(subject_external_id="u1", content=fact),
        )
    set_multilingual_provider(use_multilingual)  # type: ignore[arg-type]
    blocker = blocker_connection()
    first = second = None
    try:
        # An earlier run stopped after one batch.
        memories_reembed(actor=ACTOR, batch_size=4, limit=4)
        fill = VectorFill.objects.get(column=VectorColumn.MULTILINGUAL)
        assert (fill.done, fill.total, fill.complete) == (4, 12, False)
        assert vector_spaces.serving().mode == "primary"

        # Hold the fill's row: the worker's batch writes its vectors, then waits to count
        # them; killed there, its transaction rolls back.
        blocker.execute("SELECT 1 FROM memories_vectorfill WHERE id = %s FOR UPDATE", [fill.pk])
        first = start_worker(redis_url, queue)
        reembed.delay(batch_size=4)
        wait_for(lambda: waits_on_a_lock(blocker), timeout=120)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)
        blocker.rollback()

        assert Memory.objects.exclude(multilingual_model="").count() == 4
        fill.refresh_from_db()
        assert (fill.done, fill.complete) == (4, False)
        cache.clear()
        assert vector_spaces.serving().mode == "primary"  # no query meets a half-filled column
        outcome = recall_memories(
            RecallRequest(
                actor=ACTOR,
                namespace=acme.namespace,
                subject_external_id="u1",
                query="集邮",
                k=12,
                log=False,
            )
        )
        assert len(outcome.hits) == 12

        second = start_worker(redis_url, queue)  # the unacknowledged task comes back to it
        wait_for(lambda: VectorFill.objects.get(pk=fill.pk).complete, timeout=120)
        fill.refresh_from_db()
        assert fill.done == fill.total == 12
        cache.clear()
        assert vector_spaces.serving().mode == "routed"
        memories = list(Memory.objects.all())
        assert len(memories) == 12
        assert {m.multilingual_model for m in memories} == {"local:use-multilingual-v3"}
        keys = KeyCache()
        assert sorted(open_memory(keys, m) for m in memories) == sorted(FACTS)
        assert {m.latin_script for m in memories if "集邮" in open_memory(keys, m)} == {False}
    finally:
        blocker.close()
        for worker in (first, second):
            if worker is not None:
                stop_process(worker)
        set_multilingual_provider(None)
