"""Recall: hybrid retrieval over one subject's memories (and the namespace's shared ones).

The query is embedded on a worker thread while the subject and the keyword candidates are
found. Vector candidates are the subject's and the shared nearest, searched apart: exactly
in a small population, else through the HNSW index (a large subject's own partial one when
`subject_indexes` made it; an iterative scan, so a subject filter still yields its rows),
exactly again should that walk come back short. Keyword candidates are the best BM25 matches
of the keyed-hash token arrays of each memory and of its conversation neighbours (row by row
in a small population, else through their GIN indexes). Every candidate's similarities to
the query, by its own embedding and by its neighbour-context embedding, are computed by the
database; `ranking.score` fuses them. (A second HNSW search by neighbour context found
nothing the others missed on LoCoMo, and cost a scan: it was dropped.)
Each recall writes a RecallLog row (ids only) so admins and the subject can see what was
served to whom. Each is traced (memoryhub/tracing.py; nothing when tracing is off): a span
"recall" with children "recall.embed", "recall.candidates", "recall.score", "recall.decrypt"
(when `open` asks for the content) and "recall.log", their attributes counts only: never the
query, a subject, content or a vector. The population statistics, the keyword statement and
the candidate statement read from the replica when it may serve them (memoryhub/replica.py);
the subject, its keys and the log are the primary's.
"""

from __future__ import annotations

import logging
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
from django.utils.translation import gettext_noop
from opentelemetry import context as trace_context
from opentelemetry import trace

from apps.audit.actors import Actor
from apps.memories import keyword_index, vector_spaces
from apps.memories.embeddings import get_provider
from apps.memories.model_loading import local_models
from apps.memories.models import Memory, Subject
from apps.memories.multilingual import get_multilingual_provider, is_latin_script
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.selectors import OpenedMemory, memories_open
from apps.namespaces.models import Namespace
from apps.recall import ranking, relevance, rerank, statements, time_travel
from apps.recall.config import RecallConfig, config_of
from apps.recall.services import NewRecallLog, recall_log_create
from apps.recall.statements import RecallFilters, RecallScope
from memoryhub import metrics
from memoryhub.exceptions import ApplicationError
from memoryhub.replica import read_alias, reading_from_replica

logger = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)
MAX_K = 100
MAX_QUERY_CHARS = 4000
# A population this small is searched exactly (every vector compared): cheaper than the HNSW
# graph, and immune to its blind spots (a graph crowded with deleted or duplicate vectors can
# leave a few live rows unreachable).
EXACT_SCAN_DOCUMENTS = 1000
# Query embeddings run here, beside the request's own thread (a few, for concurrent requests).
_embedder = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-embed")


@dataclass
class RecallHit:
    memory: Memory
    score: float
    components: dict[str, float]
    # Calibrated-ish relevance in 0..1 (apps/recall/relevance.py): the first result's is the
    # probability that the memories answer the query; later ones are discounted.
    relevance: float
    # False for history (include_history): no longer valid, now or at the moment asked.
    current: bool = True
    # Asked as of a moment before the memory's last edit: its text then (version too).
    text_then: str | None = None


@dataclass
class RecallOutcome:
    hits: list[RecallHit]
    recall_id: uuid.UUID | None
    timings_ms: dict[str, float]
    subject: Subject | None = None  # the subject searched, if it exists
    # With `open`: each hit's memory decrypted (its text then, when asked as of a moment).
    opened: list[OpenedMemory] | None = None


@dataclass(frozen=True)
class RecallRequest:
    """What a recall asks. `config` is the recall configuration (default: the namespace's);
    `k`, `mmr_lambda`, `weights` and `min_relevance`, when given, override its own.
    `every_subject` searches the whole namespace (the dashboard's explorer without a subject
    filter): `subject_external_id` must then be None. With `min_relevance` the hits below it
    are left out, so a query about something never stored can get none
    (`relevance.DEFAULT_MIN_RELEVANCE` is the recommended value). `log=False` writes no
    RecallLog row; `keys` shares a key cache with the caller. `open` decrypts the hits'
    content into `RecallOutcome.opened`, with the recall's key cache."""

    actor: Actor
    namespace: Namespace
    query: str
    subject_external_id: str | None = None
    k: int | None = None
    filters: RecallFilters | None = None
    include_shared: bool = True
    mmr_lambda: float | None = None
    weights: ranking.Weights | None = None
    purpose: str = "recall"
    log: bool = True
    keys: KeyCache | None = None
    every_subject: bool = False
    config: RecallConfig | None = None
    min_relevance: float | None = None
    open: bool = False


@dataclass(frozen=True)
class _Plan:
    """A request with the configuration's defaults filled in, checked."""

    config: RecallConfig
    k: int
    mmr_lambda: float | None
    min_relevance: float | None
    weights: ranking.Weights
    half_life: float
    filters: RecallFilters
    # History asked for by the question itself (`time_travel.asks_about_the_past`): ranked
    # with what holds, not after it.
    past_question: bool = False


def _plan(request: RecallRequest) -> _Plan:
    config = request.config or config_of(request.namespace.recall_config)
    k = config.k if request.k is None else request.k
    min_relevance = config.min_relevance if request.min_relevance is None else request.min_relevance
    weights = request.weights or config.weights
    if not config.neighbour_context:
        weights = replace(weights, context=0.0, neighbour_tokens=0.0)
    query = request.query
    if not query or not query.strip():
        raise ApplicationError(gettext_noop("The query is empty."), details={"query": ["required"]})
    if len(query) > MAX_QUERY_CHARS:
        raise ApplicationError(
            gettext_noop("The query is longer than %(limit)s characters."),
            params={"limit": MAX_QUERY_CHARS},
            details={"query": ["too long"]},
        )
    if not 1 <= k <= MAX_K:
        raise ApplicationError(
            gettext_noop("k must be between 1 and %(most)s."),
            params={"most": MAX_K},
            details={"k": ["out of range"]},
        )
    if min_relevance is not None and not 0.0 <= min_relevance <= 1.0:
        raise ApplicationError(
            gettext_noop("min_relevance must be between 0 and 1."),
            details={"min_relevance": ["out of range"]},
        )
    filters = request.filters or RecallFilters()
    past_question = not filters.include_history and time_travel.asks_about_the_past(query)
    return _Plan(
        config=config,
        k=k,
        mmr_lambda=config.mmr if request.mmr_lambda is None else request.mmr_lambda,
        min_relevance=min_relevance,
        weights=weights,
        half_life=(
            request.namespace.recency_half_life_days
            if config.half_life_days is None
            else config.half_life_days
        ),
        filters=replace(filters, include_history=True) if past_question else filters,
        past_question=past_question,
    )


@dataclass
class _Found:
    """What the candidate statement found, with what it was asked."""

    subject: Subject | None
    weights: ranking.Weights  # adapted to the query
    stats: dict[str, Any]
    terms: list[int]
    frequencies: list[int]
    vectors: Any  # _QueryVectors
    primary_first: bool
    latin_query: bool
    rows: list[dict[str, Any]]  # the scoring columns of each candidate
    fetched: list[Any]  # the statement's rows, served fields included
    split: int  # where a fetched row's served fields begin


def recall_memories(request: RecallRequest) -> RecallOutcome:
    """The k memories of the subject (and shared ones) most relevant to the query, best
    first, each with its score components and a `relevance` in 0..1 (also
    `components["relevance"]`). Writes one RecallLog row unless `request.log` is False.
    Traced as the span "recall" (see the module's docstring)."""
    with tracer.start_as_current_span("recall") as span:
        span.set_attribute("memoryhub.recall.purpose", request.purpose)
        outcome = _recall(request)
        span.set_attribute("memoryhub.recall.results", len(outcome.hits))
        return outcome


def _recall(request: RecallRequest) -> RecallOutcome:
    plan = _plan(request)
    keys = request.keys or KeyCache()
    timings: dict[str, float] = {}
    started = time.perf_counter()
    found = _find(request, plan, keys, timings, started)
    then: dict[int, time_travel.Then] = {}
    if plan.filters.as_of is not None:  # the text each had then, and its vector recomputed
        every = _served(found.fetched, found.split, list(range(len(found.rows))))
        then = time_travel.versions_then(every, plan.filters.as_of, keys)
        time_travel.rescore_then(found.rows, then, found.vectors)

    mark = time.perf_counter()
    with tracer.start_as_current_span("recall.score") as span:
        span.set_attribute("memoryhub.recall.candidates", len(found.rows))
        ranked = _rank(request, plan, found, keys, timings)
    timings["score"] = _ms(mark)

    mark = time.perf_counter()
    hits = _hits(request, plan, found, ranked, then)
    opened = None
    if request.open:
        with tracer.start_as_current_span("recall.decrypt"):
            opened = _opened(hits, keys)
    recall_id = None
    if request.log:
        with tracer.start_as_current_span("recall.log"):
            recall_id = _log(request, found.subject, hits, keys, _ms(started))
    timings["fetch"] = _ms(mark)
    timings["total"] = _ms(started)
    metrics.recall_duration.observe(timings["total"] / 1000)
    metrics.recall_results.inc(len(hits))
    return RecallOutcome(hits, recall_id, timings, found.subject, opened)


def _opened(hits: list[RecallHit], keys: KeyCache) -> list[OpenedMemory]:
    """The hits' memories decrypted; a hit asked as of a moment carries its text then."""
    opened = memories_open([hit.memory for hit in hits], keys=keys)
    return [
        OpenedMemory(memory.memory, hit.text_then) if hit.text_then is not None else memory
        for hit, memory in zip(hits, opened, strict=True)
    ]


def _log(
    request: RecallRequest,
    subject: Subject | None,
    hits: list[RecallHit],
    keys: KeyCache,
    duration_ms: float,
) -> uuid.UUID:
    """The RecallLog row of this recall (its query sealed), and its id."""
    return recall_log_create(
        actor=request.actor,
        namespace=request.namespace,
        entry=NewRecallLog(
            subject=subject,
            memory_ids=[h.memory.id for h in hits],
            purpose=request.purpose,
            duration_ms=round(duration_ms, 3),
            query=request.query,
        ),
        keys=keys,
    ).id


def _find(
    request: RecallRequest, plan: _Plan, keys: KeyCache, timings: dict[str, float], started: float
) -> _Found:
    """The subject, the keyword candidates and the query's vectors, then every candidate's
    scoring columns from the database."""
    # The query is embedded on another thread (the model and the HTTP client release the
    # GIL) while this one finds the subject and the keyword candidates: the waits overlap.
    spaces = vector_spaces.serving()
    embedding = _embedder.submit(
        _timed_embedding,
        request.query,
        primary=_primary_first(spaces, request.query),
        parent=trace_context.get_current(),  # the embed span's parent: the recall's
    )
    with tracer.start_as_current_span("recall.candidates"):
        return _candidates(request, plan, keys, timings, started, spaces, embedding)


def _primary_first(spaces: vector_spaces.Spaces, query: str) -> bool:
    """The primary model reads the query unless no memory is compared with it by that model."""
    return spaces.mode == "primary" or (spaces.mode == "routed" and is_latin_script(query))


def _candidates(
    request: RecallRequest,
    plan: _Plan,
    keys: KeyCache,
    timings: dict[str, float],
    started: float,
    spaces: vector_spaces.Spaces,
    embedding: Future[tuple[np.ndarray, str, float]],
) -> _Found:
    """`_find`'s part on this thread, while the query is embedded on another."""
    query, namespace = request.query, request.namespace
    latin_query = is_latin_script(query)
    primary_first = _primary_first(spaces, query)
    try:
        subject = keys.subject_with_keys(namespace.pk, request.subject_external_id)
        scope = RecallScope(
            namespace, subject, request.include_shared, plan.filters, request.every_subject
        )
        terms = keyword_index.query_terms(query, keys.index_key(namespace.pk))
        weights = ranking.adapt(plan.weights, query, vectors_read_cjk=spaces.mode != "primary")
        stats, keyword_ids, frequencies = reading_from_replica(
            lambda: _keyword_search(scope, terms, weights, plan)
        )
    except BaseException:
        embedding.cancel()
        raise
    timings["keyword"] = _ms(started)
    query_vector, _, timings["embed"] = embedding.result()
    vectors = _query_vectors(spaces, query, query_vector, primary_first, stats, timings)
    mark = time.perf_counter()
    embedded = stats.get("embedded" if primary_first else "embedded_multilingual", 0)
    rows, fetched, split = reading_from_replica(
        lambda: _candidate_rows(scope, vectors, terms, keyword_ids, stats, plan.config, embedded)
    )
    timings["candidates"] = _ms(mark)
    return _Found(
        subject, weights, stats, terms, frequencies, vectors, primary_first, latin_query,
        rows, fetched, split,
    )  # fmt: skip


def _keyword_search(
    scope: RecallScope, terms: list[int], weights: ranking.Weights, plan: _Plan
) -> tuple[dict[str, Any], list[uuid.UUID], list[int]]:
    """The population's statistics, the keyword candidates and the query terms' document
    frequencies, from the database `read_alias()` names."""
    using = read_alias()
    stats = statements.population_stats(scope.unfiltered(), using)
    # Filters narrow the population: its statistics are then only counted where needed.
    known = stats.get("common", {}) if plan.filters == RecallFilters() else {}
    keyword_ids, frequencies = statements.keyword_candidates(
        scope, terms, stats, weights, known, limit=plan.config.keyword_candidates, using=using
    )
    return stats, keyword_ids, frequencies


def _candidate_rows(
    scope: RecallScope,
    vectors: Any,
    terms: list[int],
    keyword_ids: Any,
    stats: dict[str, Any],
    config: RecallConfig,
    embedded: int,
) -> tuple[list[dict[str, Any]], list[Any], int]:
    """Similarities are computed by the database: vectors never travel to Python for
    scoring. The connection's HNSW settings (settings.HNSW_SEARCH_OPTIONS) keep the graph
    walk going until enough rows pass the subject filter, with memory for it: at the
    defaults, a subject whose memories all lie beyond thousands of others' got one candidate,
    not forty. Read from the database `read_alias()` names."""
    exact = stats["documents"] <= EXACT_SCAN_DOCUMENTS
    with statements.bound_cursor(read_alias()) as cursor:
        while True:
            sql, params = statements.candidate_sql(
                scope, vectors, terms, keyword_ids, exact, config.vector_candidates
            )
            cursor.execute(sql, params)
            # The scoring columns, then the SERVED_FIELDS: read as a Memory if served.
            split = len(cursor.description) - len(statements.SERVED_FIELDS)
            columns = [column.name for column in cursor.description[:split]]
            fetched = cursor.fetchall()
            rows = [dict(zip(columns, row[:split], strict=True)) for row in fetched]
            nearest = sum(1 for row in rows if row["nearest"])
            if exact or nearest >= min(config.vector_candidates, embedded):
                return rows, fetched, split
            # The graph walk came back short (a selective filter, or a graph crowded with
            # deleted or duplicate vectors): compare every vector instead.
            exact = True


@dataclass
class _Ranked:
    scored: Any  # ranking.Scored
    order: Any  # candidate indexes, best first
    relevances: Any  # np.ndarray, one per served candidate
    memories: dict[int, Memory]  # candidate index -> its Memory, read when needed
    reranked: dict[int, float]


def _rank(
    request: RecallRequest, plan: _Plan, found: _Found, keys: KeyCache, timings: dict[str, float]
) -> _Ranked:
    """Score the candidates, rerank and diversify as configured, and leave out those below
    the relevance floor (before anything is read or logged: the log lists what was served)."""
    query, rows = request.query, found.rows
    term_array = np.asarray(sorted(set(found.terms)), dtype=np.int64)
    candidates = _as_candidates(
        rows, term_array, plan.half_life, found.latin_query, past_question=plan.past_question
    )
    stats = found.stats
    corpus = ranking.Corpus(
        documents=stats["documents"] or 0,
        average_length=float(stats["length"] or 0.0),
        document_frequency=np.asarray(found.frequencies or [0] * term_array.size, dtype=np.float64),
    )
    scored = ranking.score(candidates, query=query, corpus=corpus, weights=found.weights)
    order = scored.order[: plan.k]
    memories: dict[int, Memory] = {}
    reranked: dict[int, float] = {}
    if plan.config.rerank and len(candidates) and (reranker := rerank.configured()) is not None:
        pool = [int(i) for i in scored.order[: plan.config.rerank_candidates]]
        memories.update(_served(found.fetched, found.split, pool))
        reranked = _rerank(reranker, query, {i: memories[i] for i in pool}, keys, timings)
        if reranked:
            top = sorted(reranked, key=lambda i: -reranked[i])
            order = np.asarray(top + [i for i in scored.order if i not in reranked])[: plan.k]
    if plan.mmr_lambda is not None and len(candidates):
        order = _diversify(rows, scored, plan.k, plan.mmr_lambda, found.vectors)
    by_multilingual = found.vectors.by_multilingual([row["latin_script"] for row in rows])
    relevances = _relevances(
        query, candidates, by_multilingual, corpus, scored, order, term_array, keys,
        request.namespace,
    )  # fmt: skip
    if plan.min_relevance is not None:
        kept = relevances >= plan.min_relevance
        order, relevances = np.asarray(order)[kept], relevances[kept]
    return _Ranked(scored, order, relevances, memories, reranked)


def _hits(
    request: RecallRequest,
    plan: _Plan,
    found: _Found,
    ranked: _Ranked,
    then: dict[int, time_travel.Then],
) -> list[RecallHit]:
    """The served memories, as the candidate statement read them (no second query): their
    vectors and token arrays stayed in the database, only content and fields came out.
    Asked as of a moment, a memory edited since carries its version then (`then`)."""
    memories, order, relevances = ranked.memories, ranked.order, ranked.relevances
    memories.update(_served(found.fetched, found.split, [i for i in order if i not in memories]))
    if plan.filters.include_history and not plan.past_question:
        # What holds before what held: history follows every current memory found.
        as_of = plan.filters.as_of
        current_first = sorted(
            range(len(order)), key=lambda n: not _valid_at(memories[int(order[n])], as_of)
        )
        order = np.asarray(order)[current_first]
        relevances = np.asarray(relevances)[current_first]
    # Keyed by subject_id, which is None for shared memories (found: none).
    subject = found.subject
    subjects: dict[uuid.UUID | None, Subject] = {subject.pk: subject} if subject is not None else {}
    if request.every_subject:
        owners = {memory.subject_id for memory in memories.values()} - {None}
        subjects.update(Subject.objects.in_bulk(owners))
    scored, reranked = ranked.scored, ranked.reranked
    hits: list[RecallHit] = []
    for i, hit_relevance in zip(order, relevances.tolist(), strict=True):
        memory = memories[i]
        if memory.subject_id is not None and memory.subject_id not in subjects:
            continue  # read from a replica, of a subject the primary has erased since
        memory.namespace = request.namespace
        memory.subject = subjects.get(memory.subject_id)
        components = {
            name: round(float(getattr(scored, name)[i]), 6)
            for name in ("vector", "context", "keyword", "boosts", "recency", "importance", "final")
        }
        if i in reranked:
            components["rerank"] = round(reranked[i], 6)
        components["relevance"] = round(hit_relevance, 6)
        version_then = then.get(int(i))
        if version_then is not None:
            memory.version = version_then.version
        hits.append(
            RecallHit(
                memory=memory,
                score=round(float(scored.final[i]), 6),
                components=components,
                relevance=round(hit_relevance, 6),
                current=_valid_at(memory, plan.filters.as_of),
                text_then=version_then.text if version_then is not None else None,
            )
        )
    return hits


def _valid_at(memory: Memory, moment: datetime | None) -> bool:
    """Whether the memory held at `moment` (None: now)."""
    if memory.valid_to is None:
        return True
    return moment is not None and memory.valid_to > moment


def _as_candidates(
    rows: list[dict[str, Any]],
    terms: np.ndarray,
    half_life_days: float,
    latin_query: bool,
    *,
    past_question: bool = False,
) -> ranking.Candidates:
    ages = np.array([row["age_days"] for row in rows], dtype=np.float64)
    width = terms.size

    def counts(column: str) -> np.ndarray:
        # A query without keyword tokens ("+", "the") has no term columns at all.
        if width == 0 or not rows:
            return np.zeros((len(rows), width))
        return np.array([row[column] for row in rows], dtype=np.float64).reshape(-1, width)

    own_tf, context_tf = counts("own_tf"), counts("context_tf")
    matched = (own_tf + context_tf).sum(axis=1) > 0 if width else np.zeros(len(rows), dtype=bool)
    other_script = np.array([row["latin_script"] != latin_query for row in rows], dtype=bool)
    return ranking.Candidates(
        own_tf=own_tf,
        context_tf=context_tf,
        own_length=np.array([row["own_length"] or 0 for row in rows], dtype=np.float64),
        context_length=np.array([row["context_length"] or 0 for row in rows], dtype=np.float64),
        vector=np.array([row["vector_similarity"] for row in rows], dtype=np.float64),
        context=np.array([row["context_similarity"] for row in rows], dtype=np.float64),
        session=[row["session_key"] or "" for row in rows],
        position=[row["position"] for row in rows],
        speaker=[row["speaker"] or "" for row in rows],
        recency=ranking.recency_weight(ages, half_life_days),
        importance=np.array([row["importance"] for row in rows], dtype=np.float64),
        keyword_blind=other_script & ~matched,
        # A question about the past ranks what held by its own score, not below what holds.
        corrected_by=None if past_question else _corrected_by(rows),
    )


def _corrected_by(rows: list[dict[str, Any]]) -> list[list[int]]:
    """For each candidate, the candidate that replaced it (its `superseded_by`), when found:
    history asked for ranks below what replaced it."""
    found = {str(row["id"]): i for i, row in enumerate(rows)}
    return [
        [found[str(row["successor"])]]
        if row["successor"] and str(row["successor"]) in found
        else []
        for row in rows
    ]


def _relevances(
    query: str,
    candidates: ranking.Candidates,
    by_multilingual: np.ndarray,
    corpus: ranking.Corpus,
    scored: ranking.Scored,
    order: np.ndarray,
    terms: np.ndarray,
    keys: KeyCache,
    namespace: Namespace,
) -> np.ndarray:
    """The served candidates' relevance (see apps/recall/relevance.py)."""
    if len(order) == 0:
        return np.zeros(0)
    names = relevance.capitalised_words(query)
    capitalised = (
        set(keyword_index.index_terms(" ".join(names), keys.index_key(namespace.pk)))
        if names
        else set()
    )
    return relevance.relevance(
        vector=relevance.on_primary_scale(candidates.vector, by_multilingual),
        matched=(candidates.own_tf + candidates.context_tf) > 0,
        idf=relevance.inverse_document_frequency(corpus.documents, corpus.document_frequency),
        absent_names=relevance.absent_name_count(capitalised, terms, corpus.document_frequency),
        final=scored.final,
        served=np.asarray(order, dtype=np.int64),
    )


def _served(fetched: list[Any], split: int, indexes: list[int]) -> dict[int, Memory]:
    """The Memories of these candidates, from their rows' SERVED_FIELDS columns."""
    return {int(i): statements.served_memory(fetched[i][split:]) for i in indexes}


def _rerank(
    reranker: rerank.Reranker,
    query: str,
    pool: dict[int, Memory],
    keys: KeyCache,
    timings: dict[str, float],
) -> dict[int, float]:
    """The cross-encoder's score of each memory of the pool (the best `rerank_candidates`,
    by candidate index); nothing when the endpoint fails (the fused order stands, and
    timings say so)."""
    started = time.perf_counter()
    texts = [open_memory(keys, memory) for memory in pool.values()]
    try:
        scores = reranker.scores(query, texts)
    except rerank.RerankError as error:
        logger.warning("Reranking skipped: %s.", error)  # no query, no content
        timings["rerank_failed"] = 1.0
        return {}
    finally:
        timings["rerank"] = _ms(started)
    return dict(zip(pool, scores, strict=True))


def _diversify(
    rows: list[dict[str, Any]],
    scored: ranking.Scored,
    k: int,
    lam: float,
    query: statements.QueryVectors,
) -> np.ndarray:
    """MMR over the best 4k candidates; their embeddings (of one model, as the query's: no
    two models' vectors are compared; the primary one when every candidate of the pool is in
    Latin script, else the multilingual one) are fetched only for this."""
    pool = scored.order[: 4 * k]
    ids = [rows[i]["id"] for i in pool]
    latin = all(rows[i]["latin_script"] for i in pool)
    if query.primary is not None and (query.multilingual is None or latin):
        column, same_model = "embedding", {"embedding_model": query.primary_model}
    else:
        column, same_model = (
            "multilingual_embedding",
            {"multilingual_model": query.multilingual_model},
        )
    vectors = dict(Memory.objects.filter(id__in=ids, **same_model).values_list("id", column))
    dimensions = next((len(v) for v in vectors.values() if v is not None), 1)
    embeddings = np.zeros((len(rows), dimensions), dtype=np.float32)
    for i in pool:
        vector = vectors.get(rows[i]["id"])
        if vector is not None:
            embeddings[i] = np.asarray(vector, dtype=np.float32)
    return ranking.mmr(pool, scored.final, embeddings, k, lam)


def _timed_embedding(
    query: str, *, primary: bool, parent: trace_context.Context | None = None
) -> tuple[np.ndarray, str, float]:
    """The query's vector by the primary model (or the multilingual one), the name of the
    model that made it, and the milliseconds taken. Traced as "recall.embed", under `parent`
    (the recall's context, when run on another thread) or the current span."""
    started = time.perf_counter()
    with tracer.start_as_current_span("recall.embed", context=parent) as span:
        provider = get_provider() if primary else get_multilingual_provider()
        if provider is None:  # asked for only where it is on; turned off since by a test
            raise ApplicationError(gettext_noop("The multilingual model is off."), status_code=503)
        span.set_attribute("memoryhub.embedding.model", provider.name)
        return provider.embed_query(query), provider.name, _ms(started)


def _query_vectors(
    spaces: vector_spaces.Spaces,
    query: str,
    first: np.ndarray,
    primary_first: bool,
    stats: dict[str, Any],
    timings: dict[str, float],
) -> statements.QueryVectors:
    """The query's vectors for the candidate statement: `first` (by the primary model when
    `primary_first`), and, where both columns serve and some searched memory is not in
    Latin script, the multilingual one for those memories."""
    if not primary_first:
        return statements.QueryVectors(None, spaces.primary, first, spaces.multilingual)
    if spaces.mode != "routed" or not stats.get("other_script"):
        return statements.QueryVectors(first, spaces.primary)
    second, _, milliseconds = _timed_embedding(query, primary=False)
    timings["embed"] = round(timings["embed"] + milliseconds, 2)
    return statements.QueryVectors(first, spaces.primary, second, spaces.multilingual)


def warm_up_query_thread() -> None:
    """Runs each local embedding model's query path once on the thread that embeds a
    recall's query (started here rather than by the first recall). Before a server's first
    request (memoryhub/warm_up.py)."""
    for model in local_models():
        _embedder.submit(model.embed_query, "warm-up").result()


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
