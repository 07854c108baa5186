"""A conversation turn's neighbour context, as pure functions (no Django, no database).

Each turn also carries the tokens and the embedding of its neighbours (two turns either
side), so recall can find a turn by what was said around it. The store derives both on
every write; recall weighs neighbour tokens by `ranking.CONTEXT_WEIGHT`.
"""

from __future__ import annotations

import math

import numpy as np


def neighbour_context_embedding(
    own: np.ndarray, neighbours: list[tuple[int, np.ndarray]]
) -> np.ndarray:
    """normalise(e + 0.3 * e(+-1) + 0.15 * e(+-2)); `neighbours` are (offset, embedding)."""
    weights = {1: 0.3, 2: 0.15}
    total = own.astype(np.float64).copy()
    for offset, vector in neighbours:
        total += weights.get(abs(offset), 0.0) * vector
    norm = math.sqrt(float(total @ total))
    return (total / norm).astype(np.float32) if norm > 0 else total.astype(np.float32)


def neighbour_context_terms(neighbours: list[tuple[int, np.ndarray]]) -> list[int]:
    """Neighbours' tokens: +-1 twice, +-2 once (CONTEXT_WEIGHT x count = 0.5 and 0.25)."""
    terms: list[int] = []
    for offset, own_terms in neighbours:
        repeat = 2 if abs(offset) == 1 else 1 if abs(offset) == 2 else 0
        for _ in range(repeat):
            terms.extend(int(t) for t in own_terms)
    return sorted(terms)
