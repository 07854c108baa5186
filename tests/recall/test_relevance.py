"""The pure relevance functions (abstention), on hand-made arrays."""

import numpy as np
import pytest

from apps.recall import relevance


def idf(documents: int, *df: int) -> np.ndarray:
    return relevance.inverse_document_frequency(documents, np.array(df, dtype=np.float64))


def test_capitalised_words_skip_the_first_word() -> None:
    assert relevance.capitalised_words("When did Ana visit Lisbon?") == ["Ana", "Lisbon"]
    assert relevance.capitalised_words("Hiking boots") == []
    assert relevance.capitalised_words("what about LGBTQ groups") == ["LGBTQ"]


def test_idf_is_lucene_and_highest_for_unseen_terms() -> None:
    values = idf(100, 0, 10, 100)
    assert values[0] == pytest.approx(np.log1p(100.5 / 0.5))
    assert values[0] > values[1] > values[2] > 0


def test_a_close_match_is_answerable_and_a_distant_one_is_not() -> None:
    terms = idf(200, 3, 5)
    close = relevance.answerability(
        vector=np.array([0.75, 0.4]), matched=np.array([[1, 1], [0, 1]]), idf=terms, absent_names=0
    )
    distant = relevance.answerability(
        vector=np.array([0.3, 0.25]), matched=np.array([[0, 0], [0, 0]]), idf=terms, absent_names=0
    )
    assert close > 0.9
    assert distant < 0.05
    assert close > relevance.DEFAULT_MIN_RELEVANCE > distant


def test_answerability_is_monotone_in_each_feature() -> None:
    terms = idf(200, 3, 5)

    def p(cosine: float, coverage_row: list[int], absent: int) -> float:
        return relevance.answerability(
            vector=np.array([cosine]),
            matched=np.array([coverage_row]),
            idf=terms,
            absent_names=absent,
        )

    assert p(0.6, [1, 0], 0) > p(0.5, [1, 0], 0)
    assert p(0.6, [1, 1], 0) > p(0.6, [1, 0], 0) > p(0.6, [0, 0], 0)
    assert p(0.6, [1, 1], 0) > p(0.6, [1, 1], 1) > p(0.6, [1, 1], 2)
    # Absent names count up to a cap: a third one is no more telling than two.
    assert p(0.6, [1, 1], 3) == pytest.approx(p(0.6, [1, 1], 2))


def test_best_candidate_counts_not_the_first() -> None:
    terms = idf(50, 2)
    first_worse = relevance.answerability(
        vector=np.array([0.2, 0.7]), matched=np.array([[0], [1]]), idf=terms, absent_names=0
    )
    first_best = relevance.answerability(
        vector=np.array([0.7, 0.2]), matched=np.array([[1], [0]]), idf=terms, absent_names=0
    )
    assert first_worse == pytest.approx(first_best)


def test_no_candidates_and_no_terms() -> None:
    assert relevance.answerability(
        vector=np.zeros(0), matched=np.zeros((0, 0)), idf=np.zeros(0), absent_names=0
    ) == pytest.approx(0.0)
    # A query without keyword terms ("the") is judged by its cosine alone.
    only_cosine = relevance.answerability(
        vector=np.array([0.8]), matched=np.zeros((1, 0)), idf=np.zeros(0), absent_names=0
    )
    assert 0.5 < only_cosine < 1


def test_support_is_one_first_and_falls_with_gap_and_rank() -> None:
    values = relevance.support(np.array([2.0, 2.0, 1.5, 0.5]), best=2.0)
    assert values[0] == pytest.approx(1.0)
    assert 1.0 > values[1] > values[2] > values[3] > 0
    # Softened: a close tenth result keeps most of the first's relevance.
    tenth = relevance.support(np.full(10, 2.0), best=2.0)[-1]
    assert 0.5 < tenth < 1.0


def test_relevance_is_answerability_times_support_in_served_order() -> None:
    vector = np.array([0.3, 0.8, 0.5])
    matched = np.array([[0], [1], [1]])
    terms = idf(100, 4)
    final = np.array([0.4, 2.0, 1.2])
    served = np.array([1, 2, 0])
    values = relevance.relevance(
        vector=vector, matched=matched, idf=terms, absent_names=0, final=final, served=served
    )
    answerable = relevance.answerability(vector=vector, matched=matched, idf=terms, absent_names=0)
    assert values[0] == pytest.approx(answerable)
    assert values.tolist() == sorted(values.tolist(), reverse=True)
    assert values == pytest.approx(answerable * relevance.support(final[served], best=2.0))
    assert ((values >= 0) & (values <= 1)).all()
    empty = relevance.relevance(
        vector=vector, matched=matched, idf=terms, absent_names=0, final=final, served=np.zeros(0)
    )
    assert empty.size == 0


def test_unanswerable_query_drops_every_result_at_the_default() -> None:
    # A stranger's name found nowhere and nothing similar: everything goes.
    values = relevance.relevance(
        vector=np.array([0.35, 0.3, 0.28]),
        matched=np.array([[0, 1], [0, 0], [0, 1]]),
        idf=idf(300, 0, 40),
        absent_names=1,
        final=np.array([1.5, 1.2, 1.1]),
        served=np.array([0, 1, 2]),
    )
    assert (values < relevance.DEFAULT_MIN_RELEVANCE).all()


def test_absent_name_count_counts_capitalised_terms_with_no_document() -> None:
    terms = np.array([11, 22, 33])
    frequency = np.array([0, 0, 5])
    assert relevance.absent_name_count({11, 33}, terms, frequency) == 1
    assert relevance.absent_name_count({11, 22}, terms, frequency) == 2
    assert relevance.absent_name_count(set(), terms, frequency) == 0
    assert relevance.absent_name_count({44}, terms, frequency) == 0


def test_only_the_multilingual_model_s_cosines_are_mapped_onto_the_primary_scale() -> None:
    cosines = np.array([0.45, 0.45, 0.27])
    mapped = relevance.on_primary_scale(cosines, np.array([False, True, True]))
    scale, shift = relevance.MULTILINGUAL_COSINE_SCALE, relevance.MULTILINGUAL_COSINE_SHIFT
    assert mapped.tolist() == pytest.approx([0.45, scale * 0.45 + shift, scale * 0.27 + shift])
    # The multilingual model's typical answerable cosine reads as answerable, and its
    # typical unrelated one as not (bench/RESULTS.md: quartiles of the tuning set).
    answerable = relevance.answerability(
        vector=mapped[1:2], matched=np.zeros((1, 0)), idf=np.zeros(0), absent_names=0
    )
    unrelated = relevance.answerability(
        vector=mapped[2:3], matched=np.zeros((1, 0)), idf=np.zeros(0), absent_names=0
    )
    assert answerable > 0.5 > unrelated
