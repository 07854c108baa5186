"""Which vectors a query is compared with: the serving mode of the two vector columns.

Every memory has two vectors: the primary model's (`embedding`, 384 dimensions) and the
multilingual model's (`multilingual_embedding`, 512). A column serves only when it is
complete for its configured model: every memory holds a vector of that model in it. So a
query is never scored against a vector of another model, and a model switch happens in one
step, when the job that fills the new vectors beside the old ones (`memories_reembed`)
finishes:

- "routed": both complete. A pair of Latin-script texts is compared by the primary model,
  any other pair by the multilingual one (`multilingual.is_latin_script`).
- "multilingual": only the multilingual column is complete (the primary model was changed
  and its vectors are being refilled): every pair by the multilingual model.
- "primary": the multilingual model is off, or its column is being filled: every pair by
  the primary model, where the memory's vector is of that model (else by keywords alone).

Completeness is proven once (no memory lacks the model's vector: instant on a new install)
and then kept: writes embed with both models, and a write whose embedding fails marks its
column incomplete until `reembed` fills it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone

from apps.memories.embeddings import get_provider
from apps.memories.models import Memory, VectorColumn, VectorFill
from apps.memories.multilingual import get_multilingual_provider

Mode = Literal["primary", "multilingual", "routed"]
CACHE_SECONDS = 30
# Near-duplicate cosines per model (bench/duplicate_pairs_bench.py, in English and Chinese):
# (a restatement at least this alike, given the token guard; the same statement whatever the
# tokens). Neither model separates "a dog named Rex" from "a cat named Rex" by cosine alone:
# the slot and token guards (pipeline.decisions.says_no_more) decide which pairs may merge.
PRIMARY_DUPLICATE = (0.92, 0.985)
MULTILINGUAL_DUPLICATE = (0.80, 0.97)

# Each column's vector field, and the field naming the model that made it.
VECTOR_FIELD = {
    VectorColumn.PRIMARY: "embedding",
    VectorColumn.MULTILINGUAL: "multilingual_embedding",
}
MODEL_FIELD = {
    VectorColumn.PRIMARY: "embedding_model",
    VectorColumn.MULTILINGUAL: "multilingual_model",
}


@dataclass(frozen=True)
class Spaces:
    mode: Mode
    primary: str  # the configured models' names ("" where off)
    multilingual: str


def serving() -> Spaces:
    """How recall, consolidation and the review queue compare vectors right now."""
    primary = get_provider().name
    multilingual_provider = get_multilingual_provider()
    if multilingual_provider is None:
        return Spaces("primary", primary, "")
    multilingual = multilingual_provider.name
    if not column_complete(VectorColumn.MULTILINGUAL, multilingual):
        return Spaces("primary", primary, multilingual)
    if not column_complete(VectorColumn.PRIMARY, primary):
        return Spaces("multilingual", primary, multilingual)
    return Spaces("routed", primary, multilingual)


def _cache_key(column: str, model: str) -> str:
    return f"vector-fill:{column}:{model}"


def column_complete(column: VectorColumn, model: str) -> bool:
    """Whether every memory has a vector of `model` in `column` (cached a few seconds)."""
    key = _cache_key(column, model)
    complete = cache.get(key)
    if complete is None:
        fill = VectorFill.objects.filter(column=column, model=model).first()
        if fill is None:
            fill = _prove(column, model)
        complete = fill.complete
        cache.set(key, complete, timeout=CACHE_SECONDS)
    return bool(complete)


def _prove(column: VectorColumn, model: str) -> VectorFill:
    """The first look at a column for a model: complete if no memory lacks its vector."""
    sql = (
        f"SELECT NOT EXISTS (SELECT 1 FROM {Memory._meta.db_table}"  # noqa: S608
        f" WHERE {MODEL_FIELD[column]} <> %s)"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [model])
        (complete,) = cursor.fetchone()
        now = timezone.now()
        fill, _ = VectorFill.objects.get_or_create(
            column=column,
            model=model,
            defaults={"complete": complete, "finished_at": now if complete else None},
        )
    return fill


def mark_incomplete(column: VectorColumn, model: str) -> None:
    """A memory was stored without its vector of `model` (the provider failed): the column
    stops serving until `reembed` fills it."""
    VectorFill.objects.filter(column=column, model=model, complete=True).update(
        # started_at cleared: the next fill counts afresh what is done and what is left
        complete=False,
        started_at=None,
        finished_at=None,
        updated_at=timezone.now(),
    )
    cache.delete(_cache_key(column, model))


def mark_complete(column: VectorColumn, model: str, *, done: int) -> None:
    now = timezone.now()
    VectorFill.objects.update_or_create(
        column=column,
        model=model,
        defaults={"complete": True, "done": done, "updated_at": now, "finished_at": now},
    )
    cache.delete(_cache_key(column, model))


def fills() -> list[VectorFill]:
    """The configured models' fill states, primary first (for the overview and the CLI)."""
    spaces = serving()
    wanted = [(VectorColumn.PRIMARY, spaces.primary)]
    if spaces.multilingual:
        wanted.append((VectorColumn.MULTILINGUAL, spaces.multilingual))
    rows = []
    for column, model in wanted:
        column_complete(column, model)  # proven on a first look
        fill = VectorFill.objects.get(column=column, model=model)
        if not fill.complete:  # counted now: the job may not have started
            fill.total = Memory.objects.count()
            fill.done = Memory.objects.filter(**{MODEL_FIELD[column]: model}).count()
        rows.append(fill)
    return rows
