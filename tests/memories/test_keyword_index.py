"""Keyword index: tokenization rules and keyed int32 token hashes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.memories.keyword_index import (
    MAX_TOKEN_LENGTH,
    STOP_WORDS,
    hash_token,
    index_terms,
    query_terms,
    tokenize,
)

fast = settings(max_examples=80, deadline=None)

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# Text from every script and category the tokenizer treats specially, lone surrogates included.
any_text = st.text(
    st.characters(categories=["L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Cs"]), max_size=80
)


# --- tokenize ------------------------------------------------------------------------------


def test_it_unifies_inflections_by_stemming() -> None:
    assert tokenize("running") == tokenize("runs") == tokenize("run") == ["run"]


def test_it_drops_stop_words() -> None:
    assert tokenize("the cat and the hat") == ["cat", "hat"]


def test_it_returns_nothing_for_only_stop_words() -> None:
    assert tokenize("I would have been there, if only") == ["would"]
    assert tokenize("it is what it is") == []


def test_it_splits_on_apostrophes_so_contractions_vanish() -> None:
    assert tokenize("I don't like it") == ["like"]
    assert tokenize("she'll") == []


def test_it_keeps_the_word_of_a_possessive() -> None:
    assert tokenize("Alice's dog") == ["alic", "dog"]
    assert tokenize("Alice's") == tokenize("Alice")


def test_it_unifies_case() -> None:
    assert tokenize("PARIS Paris paris") == ["pari", "pari", "pari"]


def test_it_casefolds_rather_than_lowercases() -> None:
    assert tokenize("STRASSE") == tokenize("Straße")


def test_it_unifies_accented_and_plain_latin_letters() -> None:
    assert tokenize("Café") == tokenize("cafe") == ["cafe"]


def test_it_unifies_precomposed_and_decomposed_accents() -> None:
    assert tokenize("cafe\u0301") == tokenize("caf\u00e9")


def test_it_folds_latin_letters_nfkd_cannot_decompose() -> None:
    assert tokenize("Ørsted Łódź") == tokenize("orsted lodz")


def test_it_applies_compatibility_normalization() -> None:
    # Fullwidth letters and ligatures are what NFKC exists for.
    fullwidth_hello_and_fi_ligature = "\uff28\uff25\uff2c\uff2c\uff2f \ufb01le"
    assert tokenize(fullwidth_hello_and_fi_ligature) == tokenize("hello file")


def test_it_makes_each_chinese_character_a_token() -> None:
    assert tokenize("我喜欢北京") == ["我", "喜", "欢", "北", "京"]


def test_it_makes_each_kana_and_hangul_character_a_token() -> None:
    assert tokenize("すし 한국") == ["す", "し", "한", "국"]


def test_it_splits_cjk_from_adjacent_latin_words() -> None:
    assert tokenize("Python很好") == ["python", "很", "好"]


def test_it_keeps_combining_marks_inside_non_latin_words() -> None:
    # Devanagari vowel signs and viramas are combining marks but belong to the word.
    assert tokenize("हिन्दी") == ["हिन्दी"]


def test_it_keeps_numbers() -> None:
    assert tokenize("Meet at 3pm in 2023") == ["meet", "3pm", "2023"]


def test_it_splits_on_punctuation_and_underscores() -> None:
    assert tokenize("e-mail snake_case a.b") == ["e", "mail", "snake", "case", "b"]


def test_it_keeps_a_soft_hyphenated_word_whole() -> None:
    assert tokenize("co\u00adoperation") == tokenize("cooperation")


def test_it_drops_tokens_longer_than_the_limit() -> None:
    assert tokenize("z" * MAX_TOKEN_LENGTH) == ["z" * MAX_TOKEN_LENGTH]
    assert tokenize("z" * (MAX_TOKEN_LENGTH + 1) + " kept") == ["kept"]


def test_it_keeps_order_and_duplicates() -> None:
    assert tokenize("dog cat dog") == ["dog", "cat", "dog"]


def test_it_rejects_non_string_input() -> None:
    with pytest.raises(TypeError):
        tokenize(b"bytes")  # type: ignore[arg-type]


@fast
@given(text=any_text)
def test_tokens_are_non_empty_words_without_stop_words(text: str) -> None:
    for token in tokenize(text):
        assert token
        assert token not in STOP_WORDS
        assert not any(char.isspace() or char in "'\u2019-_.,;:!?" for char in token)
        token.encode("utf-8")  # no lone surrogate survives


@fast
@given(text=any_text)
def test_tokenize_is_deterministic(text: str) -> None:
    assert tokenize(text) == tokenize(text)


# --- hashing -------------------------------------------------------------------------------


def test_hash_token_is_truncated_hmac_sha256() -> None:
    # Pinned (computed independently with hmac + hashlib): stored indexes hold these integers,
    # so the construction must never change. The key is derive_key(KEY, "keyword-index").
    index_key = bytes.fromhex("124b675e6890afa83a1a19339089ffc1d9f6360891923767512ad0625486cfac")
    assert hash_token("run", index_key) == -864510153


def test_hash_token_is_deterministic_per_key() -> None:
    assert hash_token("coffee", KEY) == hash_token("coffee", KEY)


def test_hash_token_differs_across_keys() -> None:
    assert hash_token("coffee", KEY) != hash_token("coffee", OTHER_KEY)


def test_hash_token_differs_across_tokens() -> None:
    assert hash_token("coffee", KEY) != hash_token("tea", KEY)


def test_hash_token_rejects_a_short_key() -> None:
    with pytest.raises(ValueError, match="at least 16 bytes"):
        hash_token("coffee", b"short")


@fast
@given(text=any_text)
def test_index_terms_are_signed_int32(text: str) -> None:
    for term in index_terms(text, KEY):
        assert type(term) is int
        assert INT32_MIN <= term <= INT32_MAX


def test_hashes_cover_the_negative_half_of_int32() -> None:
    # A signed reading of the first 4 bytes is about half negative; all-positive means unsigned.
    terms = index_terms(" ".join(f"word{n}" for n in range(64)), KEY)
    assert any(term < 0 for term in terms)
    assert any(term > 0 for term in terms)


def test_index_terms_hash_each_token_in_order() -> None:
    text = "Running dogs chase running cats"
    assert index_terms(text, KEY) == [hash_token(token, KEY) for token in tokenize(text)]


def test_index_terms_keep_duplicates() -> None:
    terms = index_terms("dog cat dog", KEY)
    assert len(terms) == 3
    assert terms[0] == terms[2] != terms[1]


def test_index_terms_contain_no_plaintext() -> None:
    text = "my secret pin is 4711 and my password is hunter2"
    terms = index_terms(text, KEY)
    tokens = tokenize(text)
    assert terms
    assert all(type(term) is int for term in terms)
    # Neither a word's bytes nor a number's value is stored as such,
    stored = b"".join(term.to_bytes(4, "big", signed=True) for term in terms)
    for token in tokens:
        assert token.encode()[:4] not in stored, token
        assert not token.isdigit() or int(token) not in terms, token
    # nor anything computed without the key: no term survives a change of key.
    assert not set(terms) & set(index_terms(text, OTHER_KEY))


def test_query_terms_are_distinct_in_first_seen_order() -> None:
    assert query_terms("dog cat dog runs run", KEY) == [
        hash_token("dog", KEY),
        hash_token("cat", KEY),
        hash_token("run", KEY),
    ]


def test_a_query_matches_an_inflected_differently_cased_document() -> None:
    document = set(index_terms("She was RUNNING to the Café", KEY))
    assert set(query_terms("runs cafe", KEY)) <= document


@pytest.mark.django_db
@pytest.mark.parametrize("index", ["memory_token_index", "memory_context_index"])
def test_the_keyword_indexes_keep_a_short_pending_list(index: str) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [index])
        assert cursor.fetchone()[0] == ["gin_pending_list_limit=256"]


def test_a_word_whose_stem_is_a_stop_word_keeps_its_own_form() -> None:
    """Found by the property above: "ÆD" folds to "aed", which Snowball stems to "a"."""
    assert tokenize("ÆD") == ["aed"]
    assert tokenize("aed") == tokenize("Æd")
