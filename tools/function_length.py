"""No function longer than 80 lines outside tests and migrations, and none named with a
trailing number (run by `make lint`).

A function's length is `end_lineno - lineno + 1` of its `def`, docstring included (decorators
are not counted). Prints each function over the limit as `path:line name (N lines)` and exits
1 if any is not in ALLOWED. ALLOWED names the functions still to be split: it may only shrink,
so an entry whose function is no longer over the limit, or no longer exists, fails too.

A function named `_rules_1`, `_rules_2`, … is one function cut by line count: the limit
asks for a design (a table, a smaller step), so a name ending in a digit fails whatever its
length.

    .venv/bin/python tools/function_length.py
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LIMIT = 80
ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("apps", "memoryhub", "bench", "clients/python/src")
SKIPPED_DIRS = frozenset({"migrations", "tests"})

# Functions still over the limit, to be split: "path qualified.name". Empty: every function is
# within it. Never add one.
ALLOWED: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LongFunction:
    path: str  # relative to the project root, with forward slashes
    line: int
    name: str  # qualified within its module: Class.method, outer.inner
    length: int

    @property
    def key(self) -> str:
        return f"{self.path} {self.name}"

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.name} ({self.length} lines)"


def _functions(
    node: ast.AST, prefix: str = ""
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function under `node` (nested ones and methods too), with its qualified name."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{child.name}"
            yield name, child
            yield from _functions(child, f"{name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def long_functions_in(source: str, path: str, limit: int = LIMIT) -> list[LongFunction]:
    """The functions of one module's `source` longer than `limit` lines."""
    found = []
    for name, node in _functions(ast.parse(source, filename=path)):
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length > limit:
            found.append(LongFunction(path, node.lineno, name, length))
    return found


_NUMBERED = re.compile(r"\d$")
# Terms whose number is part of the name (an encoding, a number format, a ranking function, a
# product), not a chunk's count: `_utf8`, `cpu_has_bf16`, `bm25`, `run_mem0`.
TERMS = ("utf8", "bf16", "bm25", "mem0")


def numbered_functions_in(source: str, path: str) -> list[str]:
    """`path:line name` of each function of `source` whose name ends in a digit (but for a
    name that ends with one of TERMS)."""
    return [
        f"{path}:{node.lineno} {name}"
        for name, node in _functions(ast.parse(source, filename=path))
        if _NUMBERED.search(node.name) and not node.name.lower().endswith(TERMS)
    ]


def numbered_functions(root: Path = ROOT) -> list[str]:
    """Every function named with a trailing number in the scanned packages."""
    found = []
    for path in scanned_files(root):
        relative = path.relative_to(root).as_posix()
        found.extend(numbered_functions_in(path.read_text(encoding="utf-8"), relative))
    return found


def scanned_files(root: Path = ROOT) -> list[Path]:
    files = []
    for top in SCANNED:
        for path in sorted((root / top).rglob("*.py")):
            relative = path.relative_to(root)
            if not SKIPPED_DIRS.intersection(relative.parts[:-1]):
                files.append(path)
    return files


def long_functions(root: Path = ROOT) -> list[LongFunction]:
    """Every function over the limit in the scanned packages."""
    found = []
    for path in scanned_files(root):
        relative = path.relative_to(root).as_posix()
        found.extend(long_functions_in(path.read_text(encoding="utf-8"), relative))
    return found


def problems(
    found: list[LongFunction], allowed: frozenset[str] = ALLOWED
) -> tuple[list[LongFunction], list[str]]:
    """(long functions not allowed, allow-list entries no longer over the limit or gone)."""
    keys = {function.key for function in found}
    unlisted = [function for function in found if function.key not in allowed]
    stale = sorted(allowed - keys)
    return unlisted, stale


def main() -> int:
    found = long_functions()
    unlisted, stale = problems(found)
    for function in found:
        marker = "" if function in unlisted else "  [allowed, still to split]"
        print(f"{function}{marker}")
    for entry in stale:
        print(f"{entry}: allow-listed but no longer over {LIMIT} lines (or gone); remove it")
    if unlisted:
        print(f"{len(unlisted)} function(s) longer than {LIMIT} lines; split them")
    numbered = numbered_functions()
    for entry in numbered:
        print(f"{entry}: named with a trailing number; design it instead of cutting it")
    return 1 if unlisted or stale or numbered else 0


if __name__ == "__main__":
    sys.exit(main())
