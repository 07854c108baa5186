"""Keyword search without plaintext: text becomes a list of keyed 32-bit token hashes.

Each memory's text is tokenized (:func:`tokenize`), every token is replaced by a keyed hash
(:func:`hash_token`, HMAC-SHA256 truncated to a signed 32-bit int) and the resulting list
(:func:`index_terms`) is stored in a PostgreSQL ``integer[]`` column with a GIN index. A query
is hashed the same way (:func:`query_terms`); matching rows are found with ``terms && query``
and BM25 is computed from term frequencies (count of a hash in a row), document frequencies
(rows containing a hash) and document lengths (array lengths). No plaintext word is stored.

This module is pure Python: it imports nothing from Django or the rest of the project.

The key is meant to be per namespace, derived from the namespace data key, e.g.
``crypto.derive_key(namespace_data_key, "keyword-index")``; it must stay as secret as that key.

What the index leaks, to anyone who can read the table but not the key:

* **Token equality within one key's scope (one namespace).** The same word always maps to the
  same integer, so one can see which rows share words, how often each (unknown) word occurs,
  and, because :func:`index_terms` keeps order, which words follow which. With enough rows,
  frequency analysis against a known word distribution can guess the most common words; this is
  the price of searchable, deterministic tokens. Hashes from different keys are unlinkable.
* **Token counts**: each row's number of (non-stop-word) tokens, i.e. roughly its text length.
  The length of an individual word is not revealed (every hash is 32 bits).
* **CJK text is indexed per character**, so the equality leak is per Han/kana/Hangul character.

The 32-bit truncation means two different tokens can share a hash. For a namespace vocabulary of
``n`` distinct tokens the chance of any collision is about ``n**2 / 2**33`` (≈1 % at 9,000
tokens), and a collision only makes two words count as one in scoring: it adds noise to
ranking, it never exposes plaintext and never hides a true match.

Invariants:

* :func:`tokenize` is deterministic and returns tokens in text order with duplicates; every token
  is non-empty, at most ``MAX_TOKEN_LENGTH`` characters before stemming, contains no whitespace,
  punctuation or apostrophe, and is never a stop word.
* :func:`index_terms` and :func:`query_terms` return only ints in ``[-2**31, 2**31 - 1]``.
* Index and query must be produced by the same ``TOKENIZER_VERSION`` and the same stemmer
  release; changing either requires re-indexing, or old rows stop matching new queries.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import threading
import unicodedata
from functools import lru_cache
from typing import Final, Protocol

import snowballstemmer

__all__ = [
    "MAX_TOKEN_LENGTH",
    "STOP_WORDS",
    "TOKENIZER_VERSION",
    "hash_token",
    "index_terms",
    "query_terms",
    "tokenize",
]

TOKENIZER_VERSION: Final = 1
"""Bump whenever :func:`tokenize` changes output for any input; stored indexes must be rebuilt."""

MAX_TOKEN_LENGTH: Final = 64
"""Longer runs are dropped: they are hashes, base64 or URLs, not words anyone searches for."""

MIN_KEY_BYTES: Final = 16

# The NLTK English stop-word list (nltk_data corpora/stopwords/english, 179 words) minus its 26
# entries that contain an apostrophe ("don't", "you're", ...). The tokenizer splits on
# apostrophes, so those entries could never match; their fragments ("don", "t", "re", "ll", ...)
# are all in the list, which is why every English contraction disappears entirely.
STOP_WORDS: Final[frozenset[str]] = frozenset(
    {
        "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
        "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
        "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which",
        "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be",
        "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an",
        "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by",
        "for", "with", "about", "against", "between", "into", "through", "during", "before",
        "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over",
        "under", "again", "further", "then", "once", "here", "there", "when", "where", "why",
        "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no",
        "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will",
        "just", "don", "should", "now", "d", "ll", "m", "o", "re", "ve", "y", "ain", "aren",
        "couldn", "didn", "doesn", "hadn", "hasn", "haven", "isn", "ma", "mightn", "mustn",
        "needn", "shan", "shouldn", "wasn", "weren", "won", "wouldn",
    }
)  # fmt: skip

# Latin letters that carry a diacritic NFKD cannot split off (stroke, bar, dotless i) and the
# ae/oe ligatures; folded so "Ørsted"/"Orsted" and "encyclopædia"/"encyclopaedia" match.
_LATIN_FOLDS: Final = str.maketrans(
    {"ø": "o", "đ": "d", "ł": "l", "ħ": "h", "ŧ": "t", "\u0131": "i", "æ": "ae", "œ": "oe"}
)

# Scripts written without spaces between words; one character = one token, the usual
# dictionary-free approach (a bigram or dictionary segmenter would need a bigger index).
_CJK_RANGES: Final = (
    (0x1100, 0x11FF),  # Hangul Jamo (NFKC turns compatibility jamo into these)
    (0x3005, 0x3007),  # ideographic iteration mark, closing mark, number zero
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul Compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana Phonetic Extensions
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xA960, 0xA97F),  # Hangul Jamo Extended-A
    (0xAC00, 0xD7FF),  # Hangul Syllables, Hangul Jamo Extended-B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x1B000, 0x1B16F),  # Kana Supplement, Kana Extended-A, Small Kana Extension
    (0x20000, 0x323AF),  # CJK Unified Ideographs Extensions B-H, Compatibility Supplement
)

_SEPARATOR: Final = 0
_WORD: Final = 1  # letters and digits: start or continue a token
_MARK: Final = 2  # combining marks: continue a token (Devanagari vowel signs ...), never start one
_CJK: Final = 3  # a token on its own


@lru_cache(maxsize=65536)
def _char_kind(char: str) -> int:
    category = unicodedata.category(char)
    if category[0] in "LN":
        # Ranges are checked after the category so CJK punctuation (U+30FB, U+30A0) separates.
        code = ord(char)
        if any(low <= code <= high for low, high in _CJK_RANGES):
            return _CJK
        return _WORD
    if category[0] == "M":
        return _MARK
    return _SEPARATOR


@lru_cache(maxsize=65536)
def _is_latin(char: str) -> bool:
    return unicodedata.name(char, "").startswith("LATIN ")


def _is_dropped_in_normalization(char: str) -> bool:
    # Variation selectors only choose a glyph; format characters (soft hyphen, zero-width
    # joiners, BOM, bidi marks) are invisible. Dropping both keeps "co\xadoperate" one word.
    code = ord(char)
    return (
        0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or unicodedata.category(char) == "Cf"
    )


def _normalize(text: str) -> str:
    """NFKC + casefold, then strip diacritics from Latin letters only.

    Marks are removed only after a Latin base letter: in other scripts (Devanagari vowel signs,
    Japanese voicing marks, Hangul after NFKD) they are part of the letter, not an accent.
    The result is NFKC again, so non-Latin text ends as canonical composed characters.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept: list[str] = []
    after_latin = False
    for char in unicodedata.normalize("NFKD", folded):
        if _is_dropped_in_normalization(char):
            continue
        if unicodedata.category(char) == "Mn":
            if after_latin:
                continue
        else:
            after_latin = _is_latin(char)
        kept.append(char)
    return unicodedata.normalize("NFKC", "".join(kept).translate(_LATIN_FOLDS))


def _split(normalized: str) -> list[str]:
    """Split into word runs and single CJK characters; everything else separates."""
    tokens: list[str] = []
    run: list[str] = []
    for char in normalized:
        kind = _char_kind(char)
        if kind == _WORD or (kind == _MARK and run):
            run.append(char)
            continue
        if run:
            tokens.append("".join(run))
            run = []
        if kind == _CJK:
            tokens.append(char)
    if run:
        tokens.append("".join(run))
    return tokens


class _Stemmer(Protocol):
    """The part of snowballstemmer's (untyped) stemmer API used here."""

    def stemWord(self, word: str) -> str: ...


# Snowball stemmer objects keep per-call state in attributes, so one per thread.
_thread_state = threading.local()


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """Stems repeat a lot (a vocabulary is small next to a corpus): remember them."""
    return _stemmer().stemWord(word)


def _stemmer() -> _Stemmer:
    stemmer: _Stemmer | None = getattr(_thread_state, "stemmer", None)
    if stemmer is None:
        stemmer = snowballstemmer.stemmer("english")
        _thread_state.stemmer = stemmer
    return stemmer


def tokenize(text: str) -> list[str]:
    """Turn ``text`` into search tokens, in order, duplicates kept (BM25 needs term frequency).

    Pipeline: NFKC, casefold, Latin diacritics stripped ("Café" == "cafe"), split on anything
    that is not a letter, digit or combining mark (so "don't" -> "don", "t"; "e-mail" -> "e",
    "mail"; "3.14" -> "3", "14"), each Han/Hiragana/Katakana/Hangul character its own token,
    runs longer than ``MAX_TOKEN_LENGTH`` dropped, English stop words dropped, then the English
    Snowball stemmer ("running", "runs", "run" -> "run"). Numbers stay ("2023", "3pm").
    CJK characters are neither stop-worded nor stemmed.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    tokens: list[str] = []
    for token in _split(_normalize(text)):
        if len(token) == 1 and _char_kind(token) == _CJK:
            tokens.append(token)
            continue
        if len(token) > MAX_TOKEN_LENGTH or token in STOP_WORDS:
            continue
        stem = _stem(token)
        # A word whose stem is a stop word ("aed" -> "a") keeps its own form, so no token is
        # a stop word. The stemmer never returns "" for a non-empty word today; the guard keeps
        # the "tokens are non-empty" invariant independent of that.
        if stem in STOP_WORDS:
            stem = token
        if stem:
            tokens.append(stem)
    return tokens


def _keyed_hasher(key: bytes) -> hmac.HMAC:
    if not isinstance(key, bytes | bytearray | memoryview):
        raise TypeError(f"key must be bytes, not {type(key).__name__}")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"key must be at least {MIN_KEY_BYTES} bytes, got {len(key)}")
    return hmac.new(bytes(key), digestmod=hashlib.sha256)


def _hash_with(hasher: hmac.HMAC, token: str) -> int:
    # Copying a keyed HMAC skips re-deriving the inner/outer pads for every token.
    mac = hasher.copy()
    mac.update(token.encode("utf-8"))
    return int.from_bytes(mac.digest()[:4], "big", signed=True)


def hash_token(token: str, key: bytes) -> int:
    """HMAC-SHA256(key, UTF-8 token), first 4 bytes as a signed big-endian int32.

    Deterministic per ``(token, key)``; always in ``[-2**31, 2**31 - 1]`` (PostgreSQL integer).
    ``key`` must be at least ``MIN_KEY_BYTES`` bytes.
    """
    if not isinstance(token, str):
        raise TypeError(f"token must be a str, not {type(token).__name__}")
    return _hash_with(_keyed_hasher(key), token)


def index_terms(text: str, key: bytes) -> list[int]:
    """Hashes of ``tokenize(text)`` in token order, duplicates kept: the row's ``int[]`` value."""
    hasher = _keyed_hasher(key)
    return [_hash_with(hasher, token) for token in tokenize(text)]


def query_terms(text: str, key: bytes) -> list[int]:
    """Distinct hashes of the query's tokens, in first-seen order."""
    return list(dict.fromkeys(index_terms(text, key)))
