"""Recall's SQL: the population a recall searches (`RecallScope`), its statistics, the
keyword statement (BM25 over the keyed-hash token arrays, in the database) and the candidate
statement (the nearest by embedding and the keyword matches, with their similarities).

Written as SQL rather than through the ORM: building these from expressions cost more time
per recall than running them. Only fixed fragments, table names and term numbers are
interpolated; every value is a parameter.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.utils import CursorWrapper
from django.db.models import DateTimeField, Field

from apps.memories.fields import vector_literal
from apps.memories.models import SEARCH_FIELDS, Memory, Status, Subject
from apps.namespaces.models import Namespace
from apps.recall import ranking
from memoryhub import row_security, tracing

VECTOR_CANDIDATES = 40
KEYWORD_CANDIDATES = 100
# A query term held by more than this share of the searched memories, and by more than
# COMMON_TERM_MEMORIES of them ("common"), scores candidates but does not select them
# (Lucene's common-terms cut-off): its matches alone score too low to matter, and there are
# many of them (a speaker's name in a conversation: every turn). A query of common terms
# only is selected by the rarest of them. The common terms of a population, with their
# document frequencies, are counted with its other statistics.
COMMON_TERM_SHARE = 0.05
COMMON_TERM_MEMORIES = 100
# A population this small has its keyword matches found row by row, not through the GIN
# indexes (which gather every namespace match of a frequent term before the subject's).
KEYWORD_SCAN_DOCUMENTS = 1000
POPULATION_STATS_SECONDS = 300
MEMORY_TABLE = Memory._meta.db_table
# What the candidate statement reads of each candidate beside its scoring columns: every
# field but the vectors and token arrays, so that the served ones need no second query.
SERVED_FIELDS = [f for f in Memory._meta.concrete_fields if f.attname not in SEARCH_FIELDS]
_SERVED_NAMES = [served.attname for served in SERVED_FIELDS]
_AS_TEXT = {served.attname for served in SERVED_FIELDS if isinstance(served, DateTimeField)}
# The fields' own conversions from database values (JSON text to objects); the ORM passes
# an expression as the second argument, which these converters do not read.
_CONVERTERS = {
    # django-stubs leaves out Field.get_db_converters, which the ORM's compiler calls.
    served.attname: served.get_db_converters(connection)  # type: ignore[attr-defined]
    for served in SERVED_FIELDS
}


@dataclass
class RecallFilters:
    kinds: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    since: datetime | None = None
    until: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # History too: facts superseded or ended (kept, valid_to set), ranked below every
    # current memory found (search.recall_memories). Off by default: recall serves what holds.
    include_history: bool = False
    # Time travel: what held at this moment (recorded by then, valid then, not expired
    # then) instead of now. What was archived, deleted or erased since stays out.
    as_of: datetime | None = None


@dataclass(frozen=True)
class RecallScope:
    """The memories a recall searches: the live memories of `subject` (None: no subject, or
    one that does not exist yet) and, unless excluded, the namespace's shared ones, narrowed
    by `filters`. With `every_subject` (the dashboard's explorer), the live memories of every
    subject of the namespace, and the shared ones."""

    namespace: Namespace
    subject: Subject | None
    include_shared: bool
    filters: RecallFilters = field(default_factory=RecallFilters)
    every_subject: bool = False

    def unfiltered(self) -> RecallScope:
        return replace(self, filters=RecallFilters())

    def owners(self) -> list[str]:
        """The parts searched apart by vector: "subject", "shared", or both; "all" for a
        search of the whole namespace."""
        if self.every_subject:
            return ["all"]
        return (["subject"] if self.subject is not None else []) + (
            ["shared"] if self.include_shared else []
        )

    def condition(self, owner: str | None = None) -> tuple[str, dict[str, Any]]:
        """The SQL condition on the memory table (and its parameters) of this population;
        with `owner` ("subject" or "shared"), only that part of it."""
        where = ["namespace_id = %(namespace)s", "status = %(active)s"]
        if self.filters.as_of is not None:
            where += [
                "created_at <= %(as_of)s",
                "valid_from <= %(as_of)s",
                "(expires_at IS NULL OR expires_at > %(as_of)s)",
            ]
            if not self.filters.include_history:
                where.append("(valid_to IS NULL OR valid_to > %(as_of)s)")
        else:
            if not self.filters.include_history:
                where.append("valid_to IS NULL")
            where.append("(expires_at IS NULL OR expires_at > now())")
        owners = ["true"] if self.every_subject else []
        if self.subject is not None and owner in (None, "subject"):
            owners.append("subject_id = %(subject)s")
        if self.include_shared and owner in (None, "shared"):
            owners.append("subject_id IS NULL")
        where.append(f"({' OR '.join(owners)})" if owners else "false")
        filters = self.filters
        if filters.kinds:
            where.append("kind = ANY(%(kinds)s)")
        if filters.tags:
            where.append("tags && %(tags)s::varchar[]")
        if filters.since:
            where.append("COALESCE(occurred_at, created_at) >= %(since)s")
        if filters.until:
            where.append("COALESCE(occurred_at, created_at) < %(until)s")
        if filters.metadata:
            where.append("metadata @> %(metadata)s::jsonb")
        params = {
            "namespace": self.namespace.pk,
            "active": Status.ACTIVE.value,
            "subject": self.subject.pk if self.subject is not None else None,
            "kinds": list(filters.kinds),
            "tags": list(filters.tags),
            "since": filters.since,
            "until": filters.until,
            "metadata": json.dumps(filters.metadata),
            "as_of": filters.as_of,
        }
        return " AND ".join(where), params


def keyword_candidates(
    scope: RecallScope,
    terms: list[int],
    stats: dict[str, Any],
    weights: ranking.Weights,
    known_frequencies: dict[int, int],
    limit: int = KEYWORD_CANDIDATES,
    using: str = DEFAULT_DB_ALIAS,
) -> tuple[list[uuid.UUID], list[int]]:
    """The best `limit` keyword matches by BM25 (matches found row by row or
    through the GIN indexes, then BM25 in the database), and the population's document
    frequencies of the query terms (sorted by term): the known ones as given, the others
    counted over every match. Read from the database `using` names.

    Only the best matches go on to be scored in full: a large subject can have thousands of
    memories sharing a common query word, and computing their similarities would cost more
    than the whole recall budget.

    Written as SQL rather than through the ORM: building these queries from expressions cost
    more time per recall than running them.
    """
    distinct = sorted(set(terms))
    if not distinct:
        return [], []
    where, params = scope.condition()
    documents = max(int(stats["documents"] or 0), 1)
    # The known frequencies are those of the population's common terms (see
    # _population_stats): they score but do not select.
    known = {i for i, term in enumerate(distinct) if term in known_frequencies}
    selecting = [term for i, term in enumerate(distinct) if i not in known]
    if not selecting:  # only common terms: the rarest of them selects
        selecting = [min(distinct, key=known_frequencies.__getitem__)]
    # A small population is filtered row by row (cheaper than the GIN indexes, which would
    # gather every namespace match of a frequent term first); a large one through them.
    matching = (
        "(token_index || context_index) && %(selecting)s::integer[]"
        if documents <= KEYWORD_SCAN_DOCUMENTS
        else "(token_index && %(selecting)s::integer[]"
        " OR context_index && %(selecting)s::integer[])"
    )
    sql = _keyword_sql(len(distinct), known, where, matching)
    params.update(
        keyword_limit=limit,
        selecting=selecting,
        documents=documents,
        average_length=max(float(stats["length"] or 0.0), 1e-9),
        context_weight=float(weights.neighbour_tokens),
        k1=float(weights.bm25_k1),
        b=float(weights.bm25_b),
    )
    params.update({f"term_{i}": term for i, term in enumerate(distinct)})
    params.update({f"known_{i}": known_frequencies[distinct[i]] for i in known})
    with (
        connections[using].cursor() as cursor,
        row_security.owner_statement(cursor, using) as wall,
    ):
        cursor.execute(sql.replace("{wall}", f"AND {wall}" if wall else ""), params)
        ids, frequencies = cursor.fetchone()
    return list(ids), list(frequencies)


def _keyword_sql(count: int, known: set[int], where: str, matching: str) -> str:
    """The keyword candidates' statement for `count` query terms (those numbered in `known`
    have their document frequency given, the others are counted over every match)."""
    # BM25 as ranking.bm25 computes it (idf once per term), to choose which go on. Each
    # term's frequency, document frequency and idf is a column of its own (tf_i, df_i,
    # idf_i): a column is read for free, an array element is looked up each time.
    # Every number is float8: a bare parameter would be numeric, and far slower to sort by.
    numbers = range(count)
    k1, b, weight = "%(k1)s::float8", "%(b)s::float8", "%(context_weight)s::float8"
    tf = ", ".join(
        f"{term_count('token_index', i)} + {weight} * {term_count('context_index', i)} AS tf_{i}"
        for i in numbers
    )
    length = f"cardinality(token_index) + {weight} * cardinality(context_index)"
    df = ", ".join(
        f"%(known_{i})s::integer AS df_{i}"
        if i in known
        else f"count(*) FILTER (WHERE tf_{i} > 0)::integer AS df_{i}"
        for i in numbers
    )
    idf = ", ".join(
        f"ln(1 + (greatest(%(documents)s, df_{i}) - df_{i} + 0.5::float8) / (df_{i} + 0.5::float8))"
        f" AS idf_{i}"
        for i in numbers
    )
    bm25 = " + ".join(f"d.idf_{i} * k.tf_{i} * ({k1} + 1) / (k.tf_{i} + k.norm)" for i in numbers)
    # Only fixed fragments and term numbers (i) are interpolated; every value is a parameter.
    return f"""
        WITH keyword AS MATERIALIZED (
            SELECT id, {tf},
                   {k1} * (1 - {b} + {b} * ({length}) / %(average_length)s::float8) AS norm
            FROM {MEMORY_TABLE}
            WHERE {where} AND {matching} {{wall}}
        ),
        -- GROUP BY (): one row, even when every frequency is known (and nothing aggregates)
        counted AS (SELECT {df} FROM keyword GROUP BY ()),
        frequencies AS (
            SELECT ARRAY[{", ".join(f"df_{i}" for i in numbers)}]::integer[] AS df, {idf}
            FROM counted
        )
        SELECT ARRAY(SELECT k.id FROM keyword k, frequencies d
                     ORDER BY {bm25} DESC, k.id LIMIT %(keyword_limit)s),
               (SELECT df FROM frequencies)
    """  # noqa: S608


@dataclass(frozen=True)
class QueryVectors:
    """A query's vectors, and so which model compares it with each memory: with both, the
    primary model for Latin-script memories and the multilingual one for the others (the
    query itself is Latin: apps/memories/vector_spaces.py); with one, that one for all.
    Each comparison is guarded by the memory's model name: a vector of another model (a
    fill under way) gives similarity 0, and keywords alone find that memory."""

    primary: np.ndarray | None
    primary_model: str
    multilingual: np.ndarray | None = None
    multilingual_model: str = ""

    def similarity(self, column: str = "embedding") -> str:
        """SQL for a candidate's similarity to the query (of its `column`, primary side)."""
        primary = (
            f"CASE WHEN m.embedding_model = %(model)s"
            f" THEN COALESCE(1 - (m.{column} <=> %(vector)s::vector), 0) ELSE 0 END"
        )
        multilingual = (
            "CASE WHEN m.multilingual_model = %(multilingual_model)s"
            " THEN COALESCE(1 - (m.multilingual_embedding <=> %(multilingual_vector)s::vector),"
            " 0) ELSE 0 END"
        )
        if self.multilingual is None:
            return primary
        if self.primary is None:
            return multilingual
        return f"CASE WHEN m.latin_script THEN {primary} ELSE {multilingual} END"

    def nearest_branches(self, scope: RecallScope, exact: bool) -> list[str]:
        """The nearest memories by each model in use, per owner, best first."""
        sides = []
        if self.primary is not None:
            latin = " AND latin_script" if self.multilingual is not None else ""
            sides.append(("embedding", "%(vector)s", f"embedding_model = %(model)s{latin}"))
        if self.multilingual is not None:
            latin = " AND NOT latin_script" if self.primary is not None else ""
            sides.append(
                (
                    "multilingual_embedding",
                    "%(multilingual_vector)s",
                    f"multilingual_model = %(multilingual_model)s{latin}",
                )
            )
        branches = []
        for column, vector, same_model in sides:
            distance = f"{column} <=> {vector}::vector"
            if exact:
                distance = f"({distance}) + 0"  # an order the HNSW index cannot serve
            # The subject's nearest and the shared nearest are searched apart, then merged:
            # a condition on one owner is one the planner can serve well (an index walk
            # filtered by subject, or an exact scan of a few shared rows), "subject OR
            # shared" is not.
            owned = []
            for owner in scope.owners():
                condition, _ = scope.condition(owner)
                owned.append(
                    f"(SELECT id, {distance} AS distance FROM {MEMORY_TABLE}"  # noqa: S608
                    f" WHERE {condition} AND {column} IS NOT NULL AND {same_model}"
                    f" ORDER BY {distance} LIMIT %(vector_limit)s)"
                )
            if owned:
                branches.append(
                    f"(SELECT id FROM ({' UNION ALL '.join(owned)}) owned"  # noqa: S608
                    f" ORDER BY distance LIMIT %(vector_limit)s)"
                )
        return branches

    def by_multilingual(self, latin_script: list[bool]) -> np.ndarray:
        """Which of the memories (by their `latin_script`) the multilingual model compares
        with the query: a mask."""
        if self.multilingual is None:
            return np.zeros(len(latin_script), dtype=bool)
        if self.primary is None:
            return np.ones(len(latin_script), dtype=bool)
        return ~np.asarray(latin_script, dtype=bool)

    def params(self) -> dict[str, Any]:
        return {
            "vector": vector_literal(self.primary) if self.primary is not None else None,
            "model": self.primary_model,
            "multilingual_vector": (
                vector_literal(self.multilingual) if self.multilingual is not None else None
            ),
            "multilingual_model": self.multilingual_model,
        }


def candidate_sql(
    scope: RecallScope,
    vectors: QueryVectors,
    terms: list[int],
    keyword_ids: list[uuid.UUID],
    exact: bool,
    vector_limit: int = VECTOR_CANDIDATES,
) -> tuple[str, dict[str, Any]]:
    """The nearest memories by embedding (HNSW, or `exact`ly; by each model the query
    `vectors` use) and the keyword candidates, fetched by primary key with their
    similarities to the query and their query-term counts, and then (its last columns) the
    SERVED_FIELDS.

    Only vectors of the query's models are compared with it: a memory embedded by another
    model (the configured model changed, and `reembed` has not reached it yet) is found by
    its keywords alone, its vector similarities 0, never a score across two models' spaces."""
    where, params = scope.condition()
    branches = vectors.nearest_branches(scope, exact)
    if not branches:  # neither a subject nor shared memories: nothing to search
        branches.append("(SELECT NULL::uuid AS id WHERE false)")
    count = len(set(terms))
    # Without a primary vector the multilingual similarity stands for the context one too.
    context = vectors.similarity("context_embedding")
    # Only fixed fragments and term numbers are interpolated; every value is a parameter.
    sql = f"""
        WITH nearest AS MATERIALIZED ({" UNION ".join(branches)})
        SELECT m.id, m.session_key, m.position, m.importance,
               m.id IN (SELECT id FROM nearest) AS nearest,
               cardinality(m.token_index) AS own_length,
               cardinality(m.context_index) AS context_length,
               {term_counts("m.token_index", count)} AS own_tf,
               {term_counts("m.context_index", count)} AS context_tf,
               {vectors.similarity()} AS vector_similarity,
               {context} AS context_similarity,
               m.latin_script,
               m.superseded_by_id AS successor,
               m.metadata ->> 'speaker' AS speaker,
               (EXTRACT(EPOCH FROM (now() - COALESCE(m.occurred_at, m.created_at))) / 86400.0)
                   ::float8 AS age_days,
               {", ".join(_served_column(served) for served in SERVED_FIELDS)}
        FROM {MEMORY_TABLE} m
        WHERE m.id IN (SELECT id FROM nearest UNION SELECT unnest(%(keyword_ids)s::uuid[]))
          AND {where}
    """  # noqa: S608
    params.update(vectors.params(), vector_limit=vector_limit, keyword_ids=keyword_ids)
    params.update({f"term_{i}": term for i, term in enumerate(sorted(set(terms)))})
    return sql, params


def served_memory(values: tuple[Any, ...]) -> Memory:
    """A Memory of the SERVED_FIELDS' values of a candidate row (as the ORM would build it,
    its other fields deferred)."""
    converted = []
    for served, value in zip(SERVED_FIELDS, values, strict=True):
        if served.attname in _AS_TEXT and value is not None:
            value = datetime.fromisoformat(value).astimezone(connection.timezone)
        for converter in _CONVERTERS[served.attname]:
            value = converter(value, served, connection)
        converted.append(value)
    return Memory.from_db(connection.alias, _SERVED_NAMES, converted)


def _served_column(served: Field[Any, Any]) -> str:
    # Timestamps are read as ISO text, parsed only for the served rows: the driver's own
    # conversion took most of the statement's client time for a hundred candidates.
    return f"m.{served.column}::text" if served.attname in _AS_TEXT else f"m.{served.column}"


@contextmanager
def bound_cursor(using: str = DEFAULT_DB_ALIAS) -> Iterator[CursorWrapper]:
    """A cursor (on the database `using` names) that sends the values apart from the
    statement (psycopg's server-side binding), not quoted into its text as Django's cursors
    do. For the candidate statement, whose query vector appears three times: 0.8 ms less per
    recall on a 2-core Xeon (psycopg's own `Cursor`; Django's wrapper kept, with its execute
    wrappers, query log and error classes)."""
    database = connections[using]
    database.close_if_health_check_failed()
    database.ensure_connection()
    with database.wrap_database_errors:
        raw = tracing.server_binding_cursor()(database.connection)
    # Django's own step from a driver cursor to its wrapper (BaseDatabaseWrapper.cursor).
    cursor = database._prepare_cursor(raw)  # type: ignore[attr-defined]
    try:
        yield cursor
    finally:
        cursor.close()


def term_count(column: str, i: int) -> str:
    """SQL for how often query term i (parameter term_i) is in `column`."""
    return f"cardinality(array_positions({column}, %(term_{i})s::integer))"


def term_counts(column: str, count: int) -> str:
    """SQL for the array of how often each query term (parameters term_0..) is in `column`."""
    counts = ", ".join(term_count(column, i) for i in range(count))
    return f"ARRAY[{counts}]::integer[]"


def population_stats(scope: RecallScope, using: str = DEFAULT_DB_ALIAS) -> dict[str, Any]:
    """Document count (also of those with an embedding of each model, and of those not in
    Latin script), average (neighbour-weighted) length and the common terms (see
    COMMON_TERM_SHARE) with their document frequencies, of the searched population, counted
    on the database `using` names.

    BM25 needs only their rough size, which changes slowly, so they are cached for a few
    minutes instead of scanning every memory of a large subject on each recall.
    """
    subject = scope.subject.pk if scope.subject is not None else "-"
    if scope.every_subject:
        subject = "*"
    key = f"recall-stats:{scope.namespace.pk}:{subject}:{int(scope.include_shared)}"
    stats = cache.get(key)
    if stats is None:
        where, params = scope.condition()
        params["context_weight"] = ranking.CONTEXT_WEIGHT
        # Only the fixed fragments of the condition are interpolated.
        length = "token_count + %(context_weight)s * cardinality(context_index)"
        with connections[using].cursor() as cursor:
            sql = (
                f"SELECT count(*), count(embedding), avg({length}),"  # noqa: S608
                f" count(multilingual_embedding), count(*) FILTER (WHERE NOT latin_script)"
                f" FROM {MEMORY_TABLE} WHERE {where}"
            )
            cursor.execute(sql, params)
            documents, embedded, length, multilingual, other_script = cursor.fetchone()
            common: dict[int, int] = {}
            params["threshold"] = max(int(COMMON_TERM_SHARE * documents), COMMON_TERM_MEMORIES)
            if documents > params["threshold"]:  # else no term can be common
                cursor.execute(
                    f"""SELECT u.term, count(*) FROM {MEMORY_TABLE} m,
                           LATERAL (SELECT DISTINCT unnest(m.token_index || m.context_index)
                                    AS term) u
                        WHERE {where} GROUP BY u.term HAVING count(*) > %(threshold)s""",  # noqa: S608
                    params,
                )
                common = dict(cursor.fetchall())
        stats = {
            "documents": documents,
            "embedded": embedded,
            "embedded_multilingual": multilingual,
            "other_script": other_script,
            "length": float(length or 0.0),
            "common": common,
        }
        cache.set(key, stats, timeout=POPULATION_STATS_SECONDS)
    return stats
