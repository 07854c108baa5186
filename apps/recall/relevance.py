"""Calibrated relevance of recall results, for abstention (pure functions: no Django).

A question about something never stored should get no memories at all, not the ten least
unrelated ones. Each served result gets a relevance in 0..1 and `min_relevance` leaves out
those below it. Relevance has two factors:

    answerable = sigmoid(13.34 * best_cosine + 2.49 * best_coverage
                         - 2.16 * min(absent_names, 2) - 7.33)
    support_i  = P_i / P_0 with P = sigmoid(-4.38 * gap_i - 1.03 * ln(1 + rank_i) - 0.19)
    relevance_i = answerable * support_i ** 0.25

* `best_cosine`: the highest cosine similarity of the query to any candidate's embedding.
* `best_coverage`: the largest idf-weighted share of the query's terms that one candidate
  (its own tokens or its neighbours') contains: 1 when some memory has every query word.
* `absent_names`: query terms written with a capital (not the query's first word) that occur
  in none of the searched memories: a person, place or thing never mentioned.
* `gap_i`: how far the result's fused score is below the best one, relative to the best;
  `rank_i`: its place in the served list (0 = first).

`answerable` is a logistic regression of "the memories hold the answer" on the query's best
evidence, fitted with both classes weighted equally (a 50/50 prior): it is calibrated at
the query level (on held-out conversations, queries whose best result scored 0.9+ were
answerable 95% of the time at that prior; 0.7-0.9: 87%; below 0.1: 1%). `support_i`, the
result's probability of being relevant relative to the first result's (a regression on
answerable queries' results), is softened by the 0.25 power: a threshold then ends an
unanswerable query's list entirely while an answerable query keeps its lower-ranked true
hits (recall@10 may drop by 0.02 at most). The relevance of a lower result therefore
overstates the chance that this particular result is relevant; the first result's is the
chance that the query can be answered from the memories at all.

How the constants were chosen: 5 LoCoMo conversations (shared/data/locomo-dev), each asked
its own answerable questions (categories 1-4), its adversarial ones (category 5: about
things not said) and every question of the other four conversations; fitted and checked
leave-one-conversation-out (each fold fitted without the held-out conversation's memories
or questions). No data set's names or phrasing are known here: the features are cosines,
BM25 coverage, ranks and whether a capitalised query word occurs in the memories at all.
"""

from __future__ import annotations

import re

import numpy as np

# Recommended `min_relevance` (the namespace default stays off). Chosen leave-one-conversation-
# out on LoCoMo (5 conversations; each asked its ~150 answerable questions and ~850 it cannot
# answer: the other four's, and its own adversarial ones): with the coefficients fitted on
# the other four, 0.2 returned nothing for 89.0% of the unanswerable questions (per fold
# 93.6, 97.3, 82.6, 91.4, 80.2%) and cut answerable recall@10 by 0.007 on average (at most
# 0.013 in a fold; 0.25 empties 89.4% for 0.009, at most 0.020). Of the other conversations'
# questions 94.4% get nothing; of the adversarial ones (about the same people, things they
# never said) 1.7%: similarity cannot tell those from answerable ones, and they are half of
# what is still answered. End to end with the constants below (fitted on all five):
# recall@10 0.805 -> 0.800, 89.4% emptied; relevance costs about 0.2 ms per recall (p95).
DEFAULT_MIN_RELEVANCE = 0.2

# Query level: P(the memories answer the query), logistic regression.
ANSWERABLE_COSINE = 13.34
ANSWERABLE_COVERAGE = 2.49
ANSWERABLE_ABSENT_NAME = -2.16
ANSWERABLE_ABSENT_NAMES_CAP = 2
ANSWERABLE_BIAS = -7.33
# Result level: P(result relevant | answerable), relative to the first result's.
SUPPORT_GAP = -4.38
SUPPORT_RANK = -1.03
SUPPORT_BIAS = -0.19
SUPPORT_SOFTENING = 0.25

# The multilingual model's cosines run on another scale than the primary model's (a
# Chinese paraphrase of a stored fact scores 0.2-0.5 there): a cosine it gave is mapped onto
# the primary model's scale, `scale * cosine + shift`, before `answerability` reads it.
# Fitted as the answerable regression's cosine term on the bilingual tuning set's questions
# in Chinese (asked of their own conversation, and of the others'), its other terms kept
# (bench/fit_multilingual_relevance.py); checked on the holdout set (bench/RESULTS.md).
MULTILINGUAL_COSINE_SCALE = 2.880
MULTILINGUAL_COSINE_SHIFT = -0.514

_WORD = re.compile(r"\w+")


def _sigmoid(x: np.ndarray | float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def capitalised_words(query: str) -> list[str]:
    """The query's words written with a capital, but for its first (names, mostly)."""
    words = _WORD.findall(query)
    return [word for word in words[1:] if word[:1].isupper()]


def on_primary_scale(vector: np.ndarray, multilingual: np.ndarray) -> np.ndarray:
    """The candidates' cosines, those the multilingual model gave (`multilingual`, a mask)
    mapped onto the primary model's scale."""
    vector = np.asarray(vector, dtype=np.float64)
    mapped = MULTILINGUAL_COSINE_SCALE * vector + MULTILINGUAL_COSINE_SHIFT
    return np.where(np.asarray(multilingual, dtype=bool), mapped, vector)


def inverse_document_frequency(documents: int, document_frequency: np.ndarray) -> np.ndarray:
    """Lucene's idf, as ranking.bm25 computes it."""
    documents = max(documents, 1)
    df = np.asarray(document_frequency, dtype=np.float64)
    return np.log1p((documents - df + 0.5) / (df + 0.5))


def answerability(
    *,
    vector: np.ndarray,
    matched: np.ndarray,
    idf: np.ndarray,
    absent_names: int,
) -> float:
    """P(the memories answer the query) from its candidates: `vector` (n,) their cosines to
    the query, `matched` (n, T) whether each contains each query term (own or neighbour
    tokens), `idf` (T,) the terms' idf, `absent_names` the capitalised query terms found in
    no memory."""
    if len(vector) == 0:
        return 0.0
    best_cosine = float(np.max(vector))
    total = float(np.sum(idf))
    best_coverage = 0.0
    if total > 0 and matched.size:
        best_coverage = float(np.max((np.asarray(matched, dtype=np.float64) > 0) @ idf)) / total
    absent = min(max(int(absent_names), 0), ANSWERABLE_ABSENT_NAMES_CAP)
    logit = (
        ANSWERABLE_COSINE * best_cosine
        + ANSWERABLE_COVERAGE * best_coverage
        + ANSWERABLE_ABSENT_NAME * absent
        + ANSWERABLE_BIAS
    )
    return float(_sigmoid(logit))


def support(final: np.ndarray, best: float) -> np.ndarray:
    """Each served result's (in served order, `final` its fused scores) probability of being
    relevant relative to the first's, softened; 1 for the first."""
    final = np.asarray(final, dtype=np.float64)
    if final.size == 0:
        return final
    gap = np.maximum(best - final, 0.0) / max(abs(best), 1e-9)
    rank = np.log1p(np.arange(final.size, dtype=np.float64))
    relative = _sigmoid(SUPPORT_GAP * gap + SUPPORT_RANK * rank + SUPPORT_BIAS) / _sigmoid(
        SUPPORT_BIAS
    )
    return np.power(np.minimum(relative, 1.0), SUPPORT_SOFTENING)


def relevance(
    *,
    vector: np.ndarray,
    matched: np.ndarray,
    idf: np.ndarray,
    absent_names: int,
    final: np.ndarray,
    served: np.ndarray,
) -> np.ndarray:
    """Relevance in 0..1 of the served candidates (indexes `served`, in served order), from
    every candidate's cosine `vector`, term matches `matched` and fused score `final`."""
    served = np.asarray(served, dtype=np.int64)
    if served.size == 0:
        return np.zeros(0)
    answerable = answerability(vector=vector, matched=matched, idf=idf, absent_names=absent_names)
    final = np.asarray(final, dtype=np.float64)
    best = float(final.max()) if final.size else 0.0
    values = answerable * support(final[served], best)
    return np.clip(values, 0.0, 1.0)


def absent_name_count(capitalised_terms: set[int], terms: np.ndarray, frequency: np.ndarray) -> int:
    """How many of the capitalised query terms (hashes) no memory contains (df 0)."""
    if not capitalised_terms or len(terms) == 0:
        return 0
    return sum(
        1
        for term, df in zip(terms.tolist(), np.asarray(frequency).tolist(), strict=True)
        if term in capitalised_terms and df <= 0
    )


__all__ = [
    "DEFAULT_MIN_RELEVANCE",
    "absent_name_count",
    "answerability",
    "capitalised_words",
    "inverse_document_frequency",
    "on_primary_scale",
    "relevance",
    "support",
]
