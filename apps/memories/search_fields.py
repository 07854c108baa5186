"""Derived search columns of memories: keyword index, embedding, neighbour context.

Called by the services inside their transactions. Nothing here reads plaintext from the
database: the neighbour context is rebuilt from stored token hashes and embeddings.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime

import numpy as np

from apps.memories import keyword_index, multilingual, neighbour_context, vector_spaces
from apps.memories.embeddings import EmbeddingError, get_provider
from apps.memories.models import Memory, VectorColumn

logger = logging.getLogger(__name__)

NEIGHBOUR_REACH = 2


def index_text(content: str, occurred_at: datetime | None) -> str:
    """What the keyword index sees: the content, plus the date it happened in words, so that
    "in May 2023" finds what happened then."""
    if occurred_at is None:
        return content
    return f"{content} {occurred_at.day} {occurred_at:%B} {occurred_at.year}"


def index_memory(memory: Memory, content: str, index_key: bytes) -> None:
    # Sorted: BM25 needs only term counts, and the stored order would leak word sequence.
    memory.token_index = sorted(
        keyword_index.index_terms(index_text(content, memory.occurred_at), index_key)
    )
    memory.token_count = len(memory.token_index)


def embed_memories(memories: Sequence[Memory], contents: Sequence[str]) -> None:
    """Set `embedding` on each memory (one batched call). When the provider fails, the
    memories are stored without one and `reembed` fills them in later."""
    if not memories:
        return
    provider = get_provider()
    try:
        vectors = provider.embed_documents(list(contents))
    except EmbeddingError as error:
        logger.warning(
            "Embedding %d memories failed (%s); run reembed later.", len(memories), error
        )
        vector_spaces.mark_incomplete(VectorColumn.PRIMARY, provider.name)
        return
    for memory, vector in zip(memories, vectors, strict=True):
        set_embedding(memory, vector, provider.name)


def embed_multilingual(
    memories: Sequence[Memory],
    contents: Sequence[str],
    *,
    vectors: bool = True,
    given: Sequence[np.ndarray | None] = (),
) -> None:
    """Set each memory's script and, where the multilingual model is on and `vectors`, its
    vector: the one `given` for it (made by this model already), else from one batched call.
    When the provider fails, the memories are stored without one, and the column stops
    serving until `reembed` fills them in."""
    for memory, content in zip(memories, contents, strict=True):
        memory.latin_script = multilingual.is_latin_script(content)
    provider = multilingual.get_multilingual_provider()
    if not memories or provider is None or not vectors:
        return
    made = dict(enumerate(given))
    missing = [i for i in range(len(memories)) if made.get(i) is None]
    try:
        embedded = provider.embed_documents([contents[i] for i in missing])
    except EmbeddingError as error:
        logger.warning("Multilingual embedding failed (%s); run reembed later.", error)
        vector_spaces.mark_incomplete(VectorColumn.MULTILINGUAL, provider.name)
        return
    made.update(zip(missing, embedded, strict=True))
    for i, memory in enumerate(memories):
        memory.multilingual_embedding = made[i]
        memory.multilingual_model = provider.name


def set_embedding(memory: Memory, vector: np.ndarray, model: str) -> None:
    """A memory's embedding; outside a session it is also its context embedding (it has no
    neighbours)."""
    memory.embedding = vector
    memory.embedding_model = model
    if not memory.session_key:
        memory.context_embedding = vector


def refresh_neighbour_context(memories: Iterable[Memory], *, unsaved: bool = False) -> int:
    """Recompute context columns of the turns within NEIGHBOUR_REACH of the given ones.

    A turn's context is its session neighbours' tokens and embeddings, so writing or deleting
    a turn changes the context of up to four others. With `unsaved`, the given memories are
    about to be inserted: their own context is set on the objects (saved with the insert, so
    no row is written twice) and only stored neighbours are updated. Returns how many stored
    rows were updated.
    """
    memories = list(memories)
    pending = {memory.pk: memory for memory in memories} if unsaved else {}
    sessions: dict[tuple[int, uuid.UUID | None, str], set[int]] = {}
    for memory in memories:
        if memory.session_key and memory.position is not None:
            key = (memory.namespace_id, memory.subject_id, memory.session_key)
            sessions.setdefault(key, set()).add(memory.position)
    changed: list[Memory] = []
    for (namespace_id, subject_id, session_key), positions in sessions.items():
        low = min(positions) - 2 * NEIGHBOUR_REACH
        high = max(positions) + 2 * NEIGHBOUR_REACH
        # subject_id is None for shared memories: Django filters IS NULL. django-stubs rejects
        # None for a nullable foreign key's _id lookup (typeddjango/django-stubs#3472).
        stored = Memory.objects.filter(  # type: ignore[misc]  # django-stubs#3472
            namespace_id=namespace_id,
            subject_id=subject_id,
            session_key=session_key,
            position__gte=low,
            position__lte=high,
        ).only("id", "position", "token_index", "embedding")  # the context is written, not read
        by_position = {row.position: row for row in stored if row.pk not in pending}
        for memory in pending.values():
            if (memory.namespace_id, memory.subject_id, memory.session_key) == (
                namespace_id,
                subject_id,
                session_key,
            ):
                by_position[memory.position] = memory
        reach = range(-NEIGHBOUR_REACH, NEIGHBOUR_REACH + 1)
        for position in sorted({p + offset for p in positions for offset in reach}):
            row = by_position.get(position)
            if row is None:
                continue
            neighbours = [
                (offset, by_position[position + offset])
                for offset in (-2, -1, 1, 2)
                if position + offset in by_position
            ]
            row.context_index = neighbour_context.neighbour_context_terms(
                [(offset, np.asarray(n.token_index)) for offset, n in neighbours]
            )
            if row.embedding is not None:
                row.context_embedding = neighbour_context.neighbour_context_embedding(
                    np.asarray(row.embedding),
                    [
                        (offset, np.asarray(n.embedding))
                        for offset, n in neighbours
                        if n.embedding is not None
                    ],
                )
            if row.pk not in pending:
                changed.append(row)
    if changed:
        Memory.objects.bulk_update(changed, ["context_index", "context_embedding"], batch_size=500)
    return len(changed)
