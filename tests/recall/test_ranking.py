"""The pure ranking functions, on hand-made arrays."""

import numpy as np
import pytest

from apps.recall import ranking


def candidates(n: int, **columns) -> ranking.Candidates:
    base = {
        "own_tf": np.zeros((n, 1)),
        "context_tf": np.zeros((n, 1)),
        "own_length": np.full(n, 10.0),
        "context_length": np.zeros(n),
        "vector": np.zeros(n),
        "context": np.zeros(n),
        "session": [""] * n,
        "position": [None] * n,
        "speaker": [""] * n,
        "recency": np.zeros(n),
        "importance": np.zeros(n),
    }
    base.update(columns)
    return ranking.Candidates(**base)


def test_bm25_rewards_frequency_and_rarity() -> None:
    corpus = ranking.Corpus(documents=100, average_length=10, document_frequency=np.array([5, 90]))
    rows = candidates(
        3, own_tf=np.array([[1.0, 0], [2.0, 0], [0, 1.0]]), context_tf=np.zeros((3, 2))
    )
    scores = ranking.bm25(rows, corpus, k1=1.2, b=0.5)
    assert scores[1] > scores[0] > scores[2] > 0


def test_neighbour_tokens_count_a_quarter_per_copy() -> None:
    corpus = ranking.Corpus(documents=10, average_length=10, document_frequency=np.array([2]))
    own = candidates(1, own_tf=np.array([[1.0]]))
    context = candidates(1, context_tf=np.array([[4.0]]))
    assert ranking.bm25(own, corpus, k1=1.2, b=0.0) == pytest.approx(
        ranking.bm25(context, corpus, k1=1.2, b=0.0)
    )


def test_min_max_maps_to_the_unit_interval_and_flat_to_zero() -> None:
    assert ranking.min_max(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert ranking.min_max(np.array([3.0, 3.0])).tolist() == [0.0, 0.0]


def test_the_session_and_neighbour_boosts_lift_turns_near_a_strong_one() -> None:
    rows = candidates(
        3,
        vector=np.array([1.0, 0.0, 0.0]),
        session=["s1", "s1", "s2"],
        position=[0, 1, 0],
    )
    corpus = ranking.Corpus(documents=3, average_length=10, document_frequency=np.array([0]))
    scored = ranking.score(rows, query="a question", corpus=corpus, weights=ranking.Weights())
    assert scored.boosts[1] > scored.boosts[2] == 0.0


def test_a_named_speaker_is_boosted_only_when_exactly_one_is_named() -> None:
    rows = candidates(2, speaker=["Ana", "Ben"])
    corpus = ranking.Corpus(documents=2, average_length=10, document_frequency=np.array([0]))
    weights = ranking.Weights()
    one = ranking.score(rows, query="What does Ana like?", corpus=corpus, weights=weights)
    both = ranking.score(rows, query="Did Ana meet Ben?", corpus=corpus, weights=weights)
    assert one.boosts.tolist() == [weights.speaker_boost, 0.0]
    assert both.boosts.tolist() == [0.0, 0.0]


def test_keyword_like_queries_lean_on_keywords() -> None:
    assert ranking.is_keyword_like("hiking boots")
    assert not ranking.is_keyword_like("What boots does she wear for hiking?")
    assert ranking.adapt(ranking.Weights(), "boots").vector == ranking.Weights().vector / 2


@pytest.mark.parametrize(
    ("query", "keyword_like"),
    [
        ("花生过敏", True),  # a term, as typed in a search box
        ("旺财", True),
        ("他做什么工作？", False),  # one run of characters, but a question
        ("他住在哪", False),  # an interrogative character
        ("用户每个周末去郊区爬山和露营", False),  # longer than a few words
        ("深圳 hiking", True),
    ],
)
def test_chinese_queries_are_keyword_like_only_when_short_and_not_questions(
    query: str, keyword_like: bool
) -> None:
    assert ranking.is_keyword_like(query) is keyword_like


def test_a_chinese_question_leans_on_its_vectors_not_on_shared_characters() -> None:
    weights = ranking.Weights()
    adapted = ranking.adapt(weights, "他做什么工作？", vectors_read_cjk=True)
    assert adapted.keyword == pytest.approx(weights.keyword * ranking.CJK_KEYWORD_SHARE)
    assert adapted.vector == weights.vector
    assert ranking.adapt(weights, "What does he do for a living?", vectors_read_cjk=True) == (
        weights
    )
    # An English-only model's vectors tell Chinese texts nothing: keywords keep their weight.
    assert ranking.adapt(weights, "他做什么工作？") == weights


def test_a_memory_no_keyword_can_see_is_scored_on_the_full_scale() -> None:
    """An English question, a Chinese fact: no term can match it, so its similarities alone
    make its fused score, scaled to the full weight; an English fact that matches the
    question's words keeps its keyword score."""
    rows = candidates(
        3,
        own_tf=np.array([[1.0], [1.0], [0.0]]),
        vector=np.array([0.3, 0.2, 0.5]),
        context=np.array([0.3, 0.2, 0.5]),
        keyword_blind=np.array([False, False, True]),
    )
    corpus = ranking.Corpus(documents=3, average_length=10, document_frequency=np.array([2]))
    weights = ranking.Weights()
    scored = ranking.score(rows, query="Where does the user live?", corpus=corpus, weights=weights)
    full = weights.keyword + weights.vector + weights.context
    assert scored.final[2] == pytest.approx(full)  # the best similarity, on the full scale
    assert int(scored.order[0]) == 2
    seen = ranking.score(
        candidates(3, own_tf=rows.own_tf, vector=rows.vector, context=rows.context),
        query="Where does the user live?",
        corpus=corpus,
        weights=weights,
    )
    assert int(seen.order[0]) == 0  # unseen, its missing keywords would sink it


def test_recency_halves_every_half_life() -> None:
    assert ranking.recency_weight(np.array([0.0, 30.0, 60.0]), 30.0).tolist() == [1.0, 0.5, 0.25]


def test_mmr_skips_a_near_duplicate_of_what_it_chose() -> None:
    embeddings = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    final = np.array([1.0, 0.9, 0.5])
    chosen = ranking.mmr(np.array([0, 1, 2]), final, embeddings, k=2, lam=0.5)
    assert chosen.tolist() == [0, 2]
