"""Services take keyword arguments only, and at most 8 of them (run by `make lint`).

Checks every public function (its name does not start with `_`) of every services module under
apps/ (`services.py`, `services/*.py`), and the public methods of its classes (`self` and `cls`
aside): a parameter that can be passed by position, or more than 8 parameters, is reported as
`path:line name (reason)` and the checker exits 1. A write with more fields than that takes an
input object: a frozen dataclass such as `NewMemory` (`memory_create(*, actor, namespace, item,
keys=None)`).

    .venv/bin/python tools/service_signatures.py
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LIMIT = 8
ROOT = Path(__file__).resolve().parent.parent
Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class BadSignature:
    path: str  # relative to the project root, with forward slashes
    line: int
    name: str  # qualified within its module: function, or Class.method
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.name} ({self.reason})"


def _public_functions(tree: ast.Module) -> Iterator[tuple[str, Function, bool]]:
    """(qualified name, function, is a method taking self or cls) of the module's public
    functions and of its classes' public methods."""
    for node in tree.body:
        if isinstance(node, Function) and not node.name.startswith("_"):
            yield node.name, node, False
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, Function) and not method.name.startswith("_"):
                    static = any(
                        isinstance(d, ast.Name) and d.id == "staticmethod"
                        for d in method.decorator_list
                    )
                    yield f"{node.name}.{method.name}", method, not static


def _problems(function: Function, bound: bool) -> list[str]:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args][1 if bound else 0 :]
    count = len(positional) + len(arguments.kwonlyargs)
    count += (arguments.vararg is not None) + (arguments.kwarg is not None)
    found = []
    if positional or arguments.vararg is not None:
        names = [argument.arg for argument in positional]
        if arguments.vararg is not None:
            names.append(f"*{arguments.vararg.arg}")
        found.append(f"positional: {', '.join(names)}; put a bare * first")
    if count > LIMIT:
        found.append(f"{count} parameters, over {LIMIT}; take an input dataclass")
    return found


def bad_signatures_in(source: str, path: str) -> list[BadSignature]:
    """The public functions of one services module's `source` that take positional
    arguments or more than LIMIT parameters."""
    found = []
    for name, function, bound in _public_functions(ast.parse(source, filename=path)):
        for reason in _problems(function, bound):
            found.append(BadSignature(path, function.lineno, name, reason))
    return found


def service_modules(root: Path = ROOT) -> list[Path]:
    """Every services module under apps/: `services.py`, and the modules of a `services/`."""
    return sorted(
        path
        for path in (root / "apps").rglob("*.py")
        if "migrations" not in path.relative_to(root).parts
        and (path.name == "services.py" or path.parent.name == "services")
    )


def bad_signatures(root: Path = ROOT) -> list[BadSignature]:
    found = []
    for path in service_modules(root):
        relative = path.relative_to(root).as_posix()
        found.extend(bad_signatures_in(path.read_text(encoding="utf-8"), relative))
    return found


def main() -> int:
    found = bad_signatures()
    for signature in found:
        print(signature)
    if found:
        print(f"{len(found)} service signature(s) to change: keyword-only, at most {LIMIT}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
