"""No function outside tests and migrations passes 80 lines, and none is named with a
trailing number (tools/function_length.py)."""

from __future__ import annotations

from tools.function_length import (
    ALLOWED,
    LIMIT,
    LongFunction,
    long_functions,
    long_functions_in,
    numbered_functions,
    numbered_functions_in,
    problems,
)


def _module_with_function_of(lines: int) -> str:
    body = "\n".join(f"    x{i} = {i}" for i in range(lines - 2))
    return f"def short():\n    pass\n\n\ndef long():\n{body}\n    return None\n"


def test_no_function_outside_the_allow_list_is_longer_than_80_lines() -> None:
    unlisted, stale = problems(long_functions())
    assert [str(function) for function in unlisted] == []
    assert stale == [], "allow-listed functions no longer over the limit: remove them"


def test_the_checker_flags_an_81_line_function_and_not_an_80_line_one() -> None:
    assert LIMIT == 80
    assert long_functions_in(_module_with_function_of(80), "m.py") == []
    flagged = long_functions_in(_module_with_function_of(81), "m.py")
    assert flagged == [LongFunction("m.py", 5, "long", 81)]
    assert str(flagged[0]) == "m.py:5 long (81 lines)"


def test_methods_and_nested_functions_are_named_by_their_qualified_name() -> None:
    inner = "\n".join(f"            y{i} = {i}" for i in range(LIMIT))
    source = f"class C:\n    def m(self):\n        def inner():\n{inner}\n"
    names = [function.name for function in long_functions_in(source, "m.py")]
    assert names == ["C.m", "C.m.inner"]


def test_an_allow_list_entry_whose_function_is_short_or_gone_is_reported() -> None:
    found = [LongFunction("a.py", 1, "still_long", 90), LongFunction("a.py", 200, "new", 81)]
    unlisted, stale = problems(found, frozenset({"a.py still_long", "a.py split_already"}))
    assert unlisted == [found[1]]
    assert stale == ["a.py split_already"]
    assert all(" " in entry for entry in ALLOWED)


def test_no_function_is_named_with_a_trailing_number() -> None:
    assert numbered_functions() == []


def test_the_checker_flags_numbered_functions_and_methods() -> None:
    source = (
        "def rules():\n    pass\n\n\ndef _rules_2():\n    pass\n\n\n"
        "class C:\n    def part3(self):\n        pass\n"
    )
    assert numbered_functions_in(source, "m.py") == ["m.py:5 _rules_2", "m.py:10 C.part3"]


def test_a_number_that_is_part_of_a_term_is_no_chunk_count() -> None:
    source = "def bm25():\n    pass\n\n\ndef _utf8():\n    pass\n\n\ndef step_2():\n    pass\n"
    assert numbered_functions_in(source, "m.py") == ["m.py:9 step_2"]
