"""Property: whatever JSON body arrives at any JSON endpoint — arbitrary nesting, lone
surrogates, NULs, huge numbers, wrong types — the answer is never a 5xx, and every refusal
has the one error shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Tenant

# Every character, lone surrogates (category Cs) and NUL included.
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
TEXT = st.text(ANY_CHAR, max_size=12) | st.sampled_from(["", "\x00", "\ud800", "u1", "mh_x"])
NUMBERS = (
    st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, 1, -1, 2**63, 10**20, 0.5])
)
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=12,
)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


NASTY = (
    VALUES
    | st.sampled_from(["\ud800", "a\udfffb", "\x00", "nul\x00here", 10**400, -(10**400), 2**63])
    | st.integers(1, 200).map(lambda n: json.loads("[" * n + "]" * n))
)  # fmt: skip

# A valid body of each endpoint: one field at a time is made nasty (or a nasty key added),
# so the rest of the body passes validation and the nasty part reaches deep.
VALID = {
    "memories": {"subject": "u1", "content": "Likes tea", "metadata": {"a": 1}, "tags": ["t"]},
    "memories/{id}": {"content": "Likes coffee", "metadata": {"a": 1}},
    "recall": {"subject": "u1", "query": "tea", "filters": {"metadata": {"a": 1}}},
    "context": {"subject": "u1", "session": "s1", "query": "tea", "system_prompt": "Be brief."},
    "messages": {"subject": "u1", "session": "s1",
                 "messages": [{"role": "user", "content": "I like tea", "name": "Ann"}]},
    "documents": {"subject": "u1", "text": "Tea is nice. Coffee too.", "metadata": {"a": 1},
                  "title": "Drinks"},
}  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, path: str) -> str:
    body = json.loads(json.dumps(VALID[path]))
    target = body
    # Walk into a nested object or list of the valid body, sometimes.
    while draw(st.booleans()):
        children = [v for v in (target.values() if isinstance(target, dict) else target)
                    if isinstance(v, dict | list) and v]  # fmt: skip
        if not children:
            break
        target = draw(st.sampled_from(children))
    if isinstance(target, list):
        target[draw(st.integers(0, len(target) - 1))] = draw(NASTY)
    elif target and draw(st.booleans()):
        target[draw(st.sampled_from(sorted(target)))] = draw(NASTY)
    else:
        target[draw(TEXT)] = draw(NASTY)
    return json.dumps(body)


RAW_BODIES = (
    VALUES.map(json.dumps)
    | st.integers(0, 3000).map(_nested)
    | st.sampled_from(["1e999", '{"importance": 1e999}', "", "{", "nul\x00", '{"k": 1e400}'])
    | st.binary(max_size=40).map(lambda b: b.decode("latin-1"))
)

ENDPOINTS = [
    ("POST", "memories"),
    ("PATCH", "memories/{id}"),
    ("POST", "recall"),
    ("POST", "context"),
    ("POST", "messages"),
    ("POST", "documents"),
]


def assert_answered(response: Any) -> None:
    assert response.status_code < 500, response.content[:300]
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"}, body
        assert set(body["error"]) == {"code", "message", "details"}, body
        assert isinstance(body["error"]["code"], str), body
        assert body["error"]["message"], body


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_no_json_body_makes_a_5xx_and_every_refusal_has_the_error_shape(
    acme: Tenant, memory_id: str, method: str, path: str
) -> None:
    acme.client.raise_request_exception = False
    url = acme.url(path.format(id=memory_id))

    @settings(
        max_examples=80,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(mutated(path) | RAW_BODIES)
    def check(raw: str) -> None:
        response = acme.client.generic(method, url, raw, content_type="application/json")
        assert_answered(response)

    check()
