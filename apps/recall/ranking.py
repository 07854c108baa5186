"""Hybrid ranking, as pure functions over arrays (no Django, no database).

Given candidates with their keyed-hash tokens, embeddings and places in a conversation, it
computes the score components and the fused score:

    F = w_kw * mm(BM25 over turn + neighbour tokens)
      + w_vec * mm(cos(query, embedding)) + w_ctx * mm(cos(query, neighbour-weighted embedding))
    (a memory no keyword can match, in another script than the query: its similarity terms
    alone, scaled by (w_kw + w_vec + w_ctx) / (w_vec + w_ctx))
    F += session_boost * max F in the same session            (the topic is there)
    F += window_boost * max F of the turns within two places   (the answer follows the cue)
    F += speaker_boost when the query names exactly one speaker (it is about them)
    final = F + w_recency * recency + w_importance * importance
    (a turn whose values were all corrected since: just below what corrected it, when found)

`mm` is min-max over the candidates. Weights were chosen on held-in conversations and
checked leave-one-conversation-out (see README, Recall). Everything here is general: no
data set's names or phrasing are known to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

CONTEXT_WEIGHT = 0.25  # a neighbour token counts a quarter (+-2) or a half (+-1, stored twice)
_QUESTION_WORDS = {
    "who", "what", "when", "where", "why", "how", "which", "whom", "whose", "did", "does", "do",
    "is", "are", "was", "were", "can", "could", "would", "should", "will", "has", "have",
}  # fmt: skip


@dataclass(frozen=True)
class Weights:
    keyword: float = 1.0
    vector: float = 0.5
    context: float = 0.5
    session_boost: float = 0.3
    window_boost: float = 0.1
    speaker_boost: float = 0.3
    recency: float = 0.02
    importance: float = 0.6
    bm25_k1: float = 1.2
    bm25_b: float = 0.5
    # How much a neighbour's token counts in BM25 (0: a turn's neighbours do not count).
    neighbour_tokens: float = CONTEXT_WEIGHT


@dataclass
class Candidates:
    """Column arrays over n candidate memories (row i is the same memory everywhere).

    Term frequencies are of the query's T distinct terms (columns in `terms` order); the
    similarities are cosines of the query with each memory's embedding and neighbour-context
    embedding (computed by the database), 0 where a memory has none.
    """

    own_tf: np.ndarray  # (n, T) counts in the memory's own tokens
    context_tf: np.ndarray  # (n, T) counts in its neighbours' tokens (+-1 twice, +-2 once)
    own_length: np.ndarray  # (n,)
    context_length: np.ndarray  # (n,)
    vector: np.ndarray  # (n,)
    context: np.ndarray  # (n,)
    session: list[str]  # "" when not part of a conversation
    position: list[int | None]
    speaker: list[str]  # "" when unknown
    recency: np.ndarray  # 0..1, 1 = now
    importance: np.ndarray  # 0..1
    # (n,) True where the keyword score cannot see the memory: written in another script
    # than the query (a Chinese fact, an English question), none of the query's terms in it.
    # Such a memory's fused score is its similarities', scaled to the full weight (`score`).
    keyword_blind: np.ndarray | None = None
    # For each candidate, the candidates that say what corrected it: a turn whose stated
    # values were all corrected since (consolidation links it to the correcting message)
    # ranks just below the best of them.
    corrected_by: list[list[int]] | None = None

    def __len__(self) -> int:
        return len(self.session)


@dataclass
class Corpus:
    """Statistics of the population searched (the subject's memories, plus shared ones)."""

    documents: int
    average_length: float
    document_frequency: np.ndarray  # (T,) documents containing each query term (own or context)


@dataclass
class Scored:
    order: np.ndarray  # candidate indexes, best first
    final: np.ndarray
    keyword: np.ndarray
    vector: np.ndarray
    context: np.ndarray
    boosts: np.ndarray
    recency: np.ndarray
    importance: np.ndarray


# Han characters, kana and Hangul: text without spaces between words, which the keyword
# index reads one character a token (apps/memories/keyword_index.py).
_CJK = re.compile(
    r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
# Chinese interrogative characters (什么, 哪里, 谁, 几, 怎么, 吗, 呢): a closed word class.
_CJK_QUESTION = re.compile(r"[吗呢么哪谁几怎]")
CJK_KEYWORD_LIKE_CHARACTERS = 6  # about three words
# A question in Chinese, Japanese or Korean matches memories one character at a time: a
# shared character is weak evidence (的, 在, 是 match most memories), so the keyword score
# counts this share of its weight there (bench/RESULTS.md: measured on the bilingual tuning
# sets, conversations and facts).
CJK_KEYWORD_SHARE = 0.2


def is_keyword_like(query: str) -> bool:
    """Short, question-less queries ("hiking boots", "allergy", "花生过敏") lean on keywords."""
    characters = len(_CJK.findall(query))
    words = re.findall(r"\w+", _CJK.sub(" ", query).lower())
    if "?" in query or "\uff1f" in query or _CJK_QUESTION.search(query):
        return False
    return (
        len(words) <= 3
        and characters <= CJK_KEYWORD_LIKE_CHARACTERS
        and not (words and words[0] in _QUESTION_WORDS)
    )


def adapt(weights: Weights, query: str, *, vectors_read_cjk: bool = False) -> Weights:
    """The weights for this query: a keyword-like one leans on keywords; a question in
    Chinese (Japanese, Korean) on the vectors, where a model that reads it compares them
    (`vectors_read_cjk`: an English-only model's vectors tell Chinese texts nothing)."""
    if is_keyword_like(query):
        return replace(weights, vector=weights.vector / 2, context=weights.context / 2)
    if vectors_read_cjk and _CJK.search(query):
        return replace(weights, keyword=weights.keyword * CJK_KEYWORD_SHARE)
    return weights


def bm25(
    candidates: Candidates,
    corpus: Corpus,
    *,
    k1: float,
    b: float,
    neighbour: float = CONTEXT_WEIGHT,
) -> np.ndarray:
    """BM25 with neighbour-weighted term frequencies and document lengths (Lucene idf)."""
    n = len(candidates)
    if n == 0 or candidates.own_tf.shape[1] == 0:
        return np.zeros(n)
    documents = max(corpus.documents, 1)
    df = corpus.document_frequency.astype(np.float64)
    idf = np.log1p((documents - df + 0.5) / (df + 0.5))
    tf = candidates.own_tf + neighbour * candidates.context_tf
    length = candidates.own_length + neighbour * candidates.context_length
    norm = k1 * (1 - b + b * length / max(corpus.average_length, 1e-9))
    return (idf[None, :] * tf * (k1 + 1) / (tf + norm[:, None])).sum(axis=1)


def min_max(values: np.ndarray) -> np.ndarray:
    if values.size == 0:
        return values
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-12:
        return np.zeros_like(values)
    return (values - low) / (high - low)


def _speakers_named(query: str, speakers: set[str]) -> list[str]:
    lowered = query.lower()
    return [s for s in speakers if s and re.search(rf"\b{re.escape(s.lower())}\b", lowered)]


def score(candidates: Candidates, *, query: str, corpus: Corpus, weights: Weights) -> Scored:
    n = len(candidates)
    keyword = bm25(
        candidates, corpus, k1=weights.bm25_k1, b=weights.bm25_b, neighbour=weights.neighbour_tokens
    )
    vector, context = candidates.vector, candidates.context
    similar = weights.vector * min_max(vector) + weights.context * min_max(context)
    fused = weights.keyword * min_max(keyword) + similar
    blind = candidates.keyword_blind
    if blind is not None and blind.any() and weights.vector + weights.context > 0:
        # No keyword can match across scripts: its absence says nothing of such a memory,
        # which is scored by what can be seen, on the same scale as the others.
        full = (weights.keyword + weights.vector + weights.context) / (
            weights.vector + weights.context
        )
        fused = np.where(blind, similar * full, fused)

    boosts = np.zeros(n)
    by_session: dict[str, list[int]] = {}
    for i, session in enumerate(candidates.session):
        if session:
            by_session.setdefault(session, []).append(i)
    for members in by_session.values():
        best = max(fused[i] for i in members)
        placed = [(pos, i) for i in members if (pos := candidates.position[i]) is not None]
        for i in members:
            boosts[i] += weights.session_boost * best
        for position, i in placed:
            nearby = [fused[j] for p, j in placed if j != i and abs(p - position) <= 2]
            if nearby:
                boosts[i] += weights.window_boost * max(nearby)
    named = _speakers_named(query, set(candidates.speaker))
    if len(named) == 1:
        for i, speaker in enumerate(candidates.speaker):
            if speaker == named[0]:
                boosts[i] += weights.speaker_boost

    final = fused + boosts
    final = (
        final + weights.recency * candidates.recency + weights.importance * candidates.importance
    )
    for i, successors in enumerate(candidates.corrected_by or []):
        if successors:
            final[i] = min(final[i], max(final[j] for j in successors) - 1e-6)
    order = np.argsort(-final, kind="stable")
    return Scored(
        order=order,
        final=final,
        keyword=keyword,
        vector=vector,
        context=context,
        boosts=boosts,
        recency=candidates.recency,
        importance=candidates.importance,
    )


def recency_weight(age_days: np.ndarray, half_life_days: float) -> np.ndarray:
    """Exponential decay: 1 now, 0.5 after one half-life."""
    if half_life_days <= 0:
        return np.ones_like(age_days)
    return np.power(0.5, np.maximum(age_days, 0.0) / half_life_days)


def mmr(
    order: np.ndarray, final: np.ndarray, embeddings: np.ndarray, k: int, lam: float
) -> np.ndarray:
    """Maximal marginal relevance over the top of `order`: trade score for diversity."""
    pool = list(order[: max(k * 4, k)])
    chosen: list[int] = []
    relevance = min_max(final[pool]) if pool else np.zeros(0)
    rel = dict(zip(pool, relevance, strict=True))
    while pool and len(chosen) < k:

        def gain(i: int) -> float:
            similarity = max((float(embeddings[i] @ embeddings[j]) for j in chosen), default=0.0)
            return lam * rel[i] - (1 - lam) * similarity

        best = max(pool, key=gain)
        chosen.append(best)
        pool.remove(best)
    return np.asarray(chosen, dtype=np.int64)
