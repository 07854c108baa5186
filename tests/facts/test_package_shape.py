"""The extractor package stays readable: no function in it longer than 80 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import apps.facts

PACKAGE = Path(apps.facts.__file__).parent


def test_no_function_in_the_extractor_package_is_longer_than_80_lines() -> None:
    long = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 80:
                    long.append(f"{path.name}:{node.name} ({length} lines)")
    assert len(list(PACKAGE.glob("*.py"))) >= 8
    assert long == []
