"""Services take keyword arguments only, at most 8 (tools/service_signatures.py)."""

from __future__ import annotations

from tools.service_signatures import (
    LIMIT,
    ROOT,
    BadSignature,
    bad_signatures,
    bad_signatures_in,
    service_modules,
)


def _service_with(count: int) -> str:
    parameters = ", ".join(f"p{i}: int" for i in range(count))
    return f"def thing_create(*, {parameters}) -> None:\n    pass\n"


def test_every_service_function_is_keyword_only_with_at_most_8_parameters() -> None:
    assert [str(signature) for signature in bad_signatures()] == []


def test_the_services_modules_are_scanned_and_nothing_else() -> None:
    scanned = {path.relative_to(ROOT).as_posix() for path in service_modules()}
    assert {"apps/recall/services.py", "apps/memories/services/memories.py"} <= scanned
    assert all(name.startswith("apps/") for name in scanned)
    assert not any("migrations" in name or name.endswith("selectors.py") for name in scanned)


def test_a_keyword_only_service_passes_and_a_positional_one_is_flagged() -> None:
    good = "def thing_archive(*, actor: object, thing: object) -> None:\n    pass\n"
    assert bad_signatures_in(good, "s.py") == []
    bad = "def thing_archive(actor: object, *, thing: object) -> None:\n    pass\n"
    (flagged,) = bad_signatures_in(bad, "s.py")
    assert (flagged.path, flagged.line, flagged.name) == ("s.py", 1, "thing_archive")
    assert str(flagged).startswith("s.py:1 thing_archive (positional: actor;")


def test_star_args_and_positional_only_parameters_are_positional() -> None:
    source = "def a(x, /, *, y):\n    pass\n\n\ndef b(*rest):\n    pass\n"
    assert [(s.name, s.reason.split(";")[0]) for s in bad_signatures_in(source, "s.py")] == [
        ("a", "positional: x"),
        ("b", "positional: *rest"),
    ]


def test_8_parameters_pass_and_9_are_flagged() -> None:
    assert LIMIT == 8
    assert bad_signatures_in(_service_with(8), "s.py") == []
    (flagged,) = bad_signatures_in(_service_with(9), "s.py")
    assert flagged == BadSignature("s.py", 1, "thing_create", flagged.reason)
    assert flagged.reason.startswith("9 parameters, over 8")
    kwargs = "def thing_update(*, a, b, c, d, e, f, g, h, **changes):\n    pass\n"
    assert len(bad_signatures_in(kwargs, "s.py")) == 1  # **changes counts as one


def test_private_functions_are_skipped_and_methods_are_checked_without_self() -> None:
    source = (
        "def _helper(a, b):\n    pass\n\n\n"
        "class Request:\n"
        "    def __init__(self, a):\n        pass\n\n"
        "    @classmethod\n    def from_data(cls, *, data):\n        pass\n\n"
        "    @property\n    def size(self):\n        pass\n\n"
        "    def as_dict(self, full):\n        pass\n\n"
        "    @staticmethod\n    def parse(text):\n        pass\n"
    )
    names = [signature.name for signature in bad_signatures_in(source, "s.py")]
    assert names == ["Request.as_dict", "Request.parse"]
