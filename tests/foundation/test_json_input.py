"""The one JSON guard: depth measured on the raw text without recursion, before parsing, so
a body nested hundreds of thousands of levels deep is refused cheaply and never raises
RecursionError; what parses is checked for what cannot be stored."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryhub.json_input import MAX_DEPTH, JsonInputError, json_loads, nesting_exceeds


def nested(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


def nested_objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def test_it_parses_json_at_the_depth_limit() -> None:
    value = json_loads(nested(MAX_DEPTH, "1"))
    for _ in range(MAX_DEPTH):
        value = value[0]
    assert value == 1
    assert json_loads(nested_objects(MAX_DEPTH)) is not None


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5_000, 20_000, 400_000])
@pytest.mark.parametrize("shape", [nested, lambda depth: nested_objects(depth)])
def test_it_refuses_json_nested_past_the_limit_without_recursing(depth: int, shape: Any) -> None:
    with pytest.raises(JsonInputError) as refused:
        json_loads(shape(depth))
    assert refused.value.code == "too_deep"
    assert str(refused.value) == f"nested deeper than {MAX_DEPTH} levels"


def test_it_refuses_deep_text_that_is_not_even_json() -> None:
    # Unclosed brackets: the depth is found before the parser would fail (or recurse).
    with pytest.raises(JsonInputError) as refused:
        json_loads("[" * 100_000)
    assert refused.value.code == "too_deep"


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"a": "[" * 1000, "b": 'quote \\" then [[[[ and \\\\', "c": "{" * 500})
    assert not nesting_exceeds(text)
    assert json_loads(text)["a"] == "[" * 1000


def test_an_escaped_quote_does_not_end_a_string() -> None:
    text = json.dumps(['"' + "[" * 100])  # the string holds a quote, then brackets
    assert json_loads(text) == ['"' + "[" * 100]


@pytest.mark.parametrize(
    ("text", "code", "says"),
    [
        ("not json", "not_json", "not JSON (Expecting value at line 1 column 1)"),
        ("", "not_json", "not JSON"),
        (b"\xff\xfe", "not_json", "not UTF-8 text"),
        ('["\\ud800"]', "unstorable", "lone surrogate"),
        ('{"\\udfff": 1}', "unstorable", "key with a lone surrogate"),
        ("1e999", "unstorable", "too large"),
        ("[NaN]", "unstorable", "too large"),
    ],
)
def test_it_names_what_is_wrong(text: str | bytes, code: str, says: str) -> None:
    with pytest.raises(JsonInputError) as refused:
        json_loads(text)
    assert refused.value.code == code
    assert says in str(refused.value)


def test_a_refusal_is_a_value_error() -> None:
    # Callers that already catch ValueError for bad JSON keep working.
    with pytest.raises(ValueError, match="nested deeper"):
        json_loads(nested(10_000))


def test_a_lower_bound_can_be_asked_for() -> None:
    assert json_loads(nested(3), max_depth=3) == [[[]]]
    with pytest.raises(JsonInputError):
        json_loads(nested(4), max_depth=3)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",))),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(st.characters(exclude_categories=("Cs",))), children, max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(JSON_VALUES)
def test_any_storable_value_within_the_bound_comes_back_as_json_reads_it(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert json_loads(text) == json.loads(text)
    assert json_loads(text.encode()) == json.loads(text)
