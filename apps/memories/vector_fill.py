"""The job that fills the configured models' vectors beside the old ones
(apps/memories/vector_spaces.py): `manage.py reembed`, the `memories.reembed` task, and the
embedding of large documents' chunks."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories import vector_spaces
from apps.memories.embeddings import EmbeddingProvider, get_provider
from apps.memories.models import Memory, VectorColumn, VectorFill
from apps.memories.multilingual import get_multilingual_provider
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.search_fields import (
    embed_memories,
    embed_multilingual,
    refresh_neighbour_context,
)
from memoryhub.exceptions import ApplicationError


def memories_reembed(
    *,
    actor: Actor,
    batch_size: int = 256,
    limit: int | None = None,
    memory_ids: list[str] | None = None,
    progress: Callable[[VectorFill], None] | None = None,
) -> int:
    """Fill the vectors of the configured models: each memory (of `memory_ids`, when given)
    whose primary or multilingual vector is missing or came from another model, in batches.

    The new vectors go beside the old ones: a column serves recall only once it is complete
    (apps/memories/vector_spaces.py), so until then queries meet the other column's vectors
    or keywords, never a mix of two models in one space; the last batch switches it on.
    Resumable by construction: each batch commits with the fill's progress, and a memory
    holding the current model's vector is never picked again, so a run killed mid-way
    continues where it stopped. Returns how many vectors were written; one audit event
    records the counts. `progress` is called after each batch."""
    columns: list[tuple[VectorColumn, EmbeddingProvider]] = [(VectorColumn.PRIMARY, get_provider())]
    if (multilingual := get_multilingual_provider()) is not None:
        columns.append((VectorColumn.MULTILINGUAL, multilingual))
    counts: dict[str, int] = {}
    for column, provider in columns:
        budget = None if limit is None else limit - sum(counts.values())
        counts[column] = _fill_column(column, provider, batch_size, budget, memory_ids, progress)
    audit_record(
        actor=actor,
        action="memory.reembed",
        object_type="memory",
        details={
            "count": sum(counts.values()),
            "model": columns[0][1].name,
            **({"multilingual_model": columns[1][1].name} if len(columns) > 1 else {}),
            "counts": counts,
        },
    )
    return sum(counts.values())


def _fill_column(
    column: VectorColumn,
    provider: EmbeddingProvider,
    batch_size: int,
    limit: int | None,
    memory_ids: list[str] | None,
    progress: Callable[[VectorFill], None] | None,
) -> int:
    """`memories_reembed` for one column: batches until none is left (or `limit`)."""
    model_field = vector_spaces.MODEL_FIELD[column]
    pending = Memory.objects.exclude(**{model_field: provider.name})
    if memory_ids is not None:
        pending = pending.filter(id__in=memory_ids)
    whole = memory_ids is None
    if whole:
        fill, _ = VectorFill.objects.get_or_create(column=column, model=provider.name)
        total = Memory.objects.count()
        # Counted once, when a fill first starts: a conditional update that matches no row
        # takes no lock, so a resumed run does not wait on whoever reads the row.
        VectorFill.objects.filter(pk=fill.pk, started_at__isnull=True).update(
            started_at=timezone.now(), total=total, done=total - pending.count()
        )
    done = 0
    while limit is None or done < limit:
        with transaction.atomic():
            batch = list(
                pending.select_for_update(skip_locked=True).order_by("pk")[
                    : batch_size if limit is None else min(batch_size, limit - done)
                ]
            )
            if not batch:
                break
            keys = KeyCache()
            contents = [open_memory(keys, memory) for memory in batch]
            if column == VectorColumn.PRIMARY:
                embed_memories(batch, contents)
                fields = ["embedding", "embedding_model", "context_embedding"]
            else:
                embed_multilingual(batch, contents)
                fields = ["multilingual_embedding", "multilingual_model", "latin_script"]
            embedded = [m for m in batch if getattr(m, model_field) == provider.name]
            if not embedded:
                raise ApplicationError(
                    gettext_noop("The embedding provider failed; nothing was re-embedded."),
                    status_code=503,
                )
            Memory.objects.bulk_update(embedded, fields)
            if column == VectorColumn.PRIMARY:
                refresh_neighbour_context(embedded)
            done += len(embedded)
            if whole:  # committed with the batch's vectors
                VectorFill.objects.filter(pk=fill.pk).update(
                    done=F("done") + len(embedded), updated_at=timezone.now()
                )
        if progress is not None and whole:
            fill.refresh_from_db()
            progress(fill)
    if whole and not pending.exists():
        vector_spaces.mark_complete(column, provider.name, done=Memory.objects.count())
        if progress is not None:
            progress(VectorFill.objects.get(column=column, model=provider.name))
    return done
