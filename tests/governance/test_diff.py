"""Word-level differences between versions (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from apps.governance.diff import Piece, word_diff, words


def test_it_marks_a_replaced_word_as_removed_then_added() -> None:
    assert word_diff("The user likes green tea.", "The user likes jasmine tea.") == [
        Piece("same", "The user likes "),
        Piece("removed", "green"),
        Piece("added", "jasmine"),
        Piece("same", " tea."),
    ]


def test_it_marks_an_added_word_only_as_added() -> None:
    pieces = word_diff("lives in Paris", "lives in Paris now")
    assert [p for p in pieces if p.op != "same"] == [Piece("added", " now")]


def test_it_treats_each_chinese_character_as_a_word() -> None:
    pieces = word_diff("我住在杭州", "我住在上海")
    assert Piece("removed", "杭州") in pieces
    assert Piece("added", "上海") in pieces
    assert Piece("same", "我住在") in pieces


def test_it_finds_no_change_in_equal_texts() -> None:
    assert word_diff("same text", "same text") == [Piece("same", "same text")]


@given(st.text(), st.text())
def test_it_rebuilds_both_texts_from_its_pieces(before: str, after: str) -> None:
    pieces = word_diff(before, after)
    assert "".join(p.text for p in pieces if p.op != "added") == before
    assert "".join(p.text for p in pieces if p.op != "removed") == after


@given(st.text())
def test_it_cuts_text_into_words_that_join_back(text: str) -> None:
    assert "".join(words(text)) == text
