import numpy as np
import pytest

from apps.memories import neighbour_context


def test_neighbour_context_weights_near_turns_twice() -> None:
    terms = neighbour_context.neighbour_context_terms(
        [(-1, np.array([7])), (2, np.array([9])), (3, np.array([11]))]
    )
    assert terms == [7, 7, 9]
    vector = neighbour_context.neighbour_context_embedding(
        np.array([1.0, 0.0]), [(1, np.array([0.0, 1.0]))]
    )
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0)
    assert vector[1] == pytest.approx(0.3 / np.sqrt(1.09))
