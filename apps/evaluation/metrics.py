"""Retrieval metrics over ranked ids and a set of relevant ids (pure functions)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(relevant & set(ranked[:k])) / len(relevant)


def hit_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return 1.0 if relevant & set(ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: set[str]) -> float:
    for rank, item in enumerate(ranked, start=1):
        if item in relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    gains = sum(
        1.0 / math.log2(rank + 1)
        for rank, item in enumerate(ranked[:k], start=1)
        if item in relevant
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return gains / ideal if ideal else 0.0


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (share in 0..1)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, math.ceil(share * len(ordered)) - 1)
    return ordered[index]


RANK_KS = (1, 3, 5, 10)


def case_scores(ranked: Sequence[str], relevant: set[str], ks: Sequence[int]) -> dict[str, float]:
    """The ranking metrics of one answerable case: recall@k and hit@k for each k, MRR and
    nDCG@10. `ranked` are answer units best first (deduplicated), `relevant` the expected."""
    scores: dict[str, float] = {}
    for k in ks:
        scores[f"recall@{k}"] = recall_at(ranked, relevant, k)
        scores[f"hit@{k}"] = hit_at(ranked, relevant, k)
    scores["mrr"] = reciprocal_rank(ranked, relevant)
    scores["ndcg@10"] = ndcg_at(ranked, relevant, 10)
    return scores


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def abstention(returned_nothing: Sequence[bool], unanswerable: Sequence[bool]) -> dict[str, float]:
    """Precision and recall of abstaining (returning nothing), unanswerable cases being the
    positives: of the cases that returned nothing, how many were unanswerable; of the
    unanswerable cases, how many returned nothing."""
    pairs = list(zip(returned_nothing, unanswerable, strict=True))
    abstained = [u for r, u in pairs if r]
    positives = [r for r, u in pairs if u]
    out: dict[str, float] = {}
    if abstained:
        out["abstention_precision"] = sum(abstained) / len(abstained)
    if positives:
        out["abstention_recall"] = sum(positives) / len(positives)
    return out


@dataclass(frozen=True)
class Interval:
    delta: float  # mean of b - a
    low: float
    high: float

    @property
    def significant(self) -> bool:
        """The 95% interval leaves out zero: not noise, by this test."""
        return self.low > 0 or self.high < 0


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], *, samples: int = 2000, seed: int = 0
) -> Interval:
    """The mean difference b - a over paired cases, with a percentile bootstrap 95% interval:
    cases are resampled with replacement `samples` times (seeded: the same runs give the
    same interval), the interval is the 2.5th and 97.5th percentiles of the resampled means."""
    if len(a) != len(b):
        raise ValueError("paired samples differ in length")
    differences = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if differences.size == 0:
        return Interval(0.0, 0.0, 0.0)
    generator = np.random.default_rng(seed)
    picks = generator.integers(0, differences.size, size=(samples, differences.size))
    means = differences[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(differences.mean()), float(low), float(high))
