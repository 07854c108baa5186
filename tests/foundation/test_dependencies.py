"""Every third-party module the product imports is a dependency `pyproject.toml` declares,
not one that arrives only because another package needs it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"apps", "memoryhub", "memoryhub_client", "tests", "bench", "tools", "manage"}
# Run by an interpreter of its own (the peer benchmark's venv), not MemoryHub's.
OWN_ENVIRONMENT = {"bench/peer_mem0.py"}


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(*extras: str) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    return {normal(re.split(r"[\[<>=!~; ]", spec, maxsplit=1)[0]) for spec in wanted}


def imported(*folders: str) -> dict[str, str]:
    """Top-level third-party module -> a file that imports it."""
    found: dict[str, str] = {}
    for folder in folders:
        for path in (ROOT / folder).rglob("*.py"):
            where = str(path.relative_to(ROOT))
            if "migrations" in path.parts or where in OWN_ENVIRONMENT:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    top = name.split(".")[0]
                    local = (path.parent / f"{top}.py").exists()
                    if not local and top not in sys.stdlib_module_names | FIRST_PARTY:
                        found.setdefault(top, where)
    return found


def undeclared(modules: dict[str, str], allowed: set[str]) -> list[str]:
    providers = packages_distributions()
    missing = []
    for module, where in sorted(modules.items()):
        distributions = {normal(d) for d in providers.get(module, [])}
        if not distributions and normal(module) in allowed:
            continue  # declared in an extra this machine has not installed (loadtest)
        if not distributions:
            missing.append(f"{module} ({where}): no installed distribution provides it")
        elif not distributions & allowed:
            missing.append(f"{module} ({where}): from {sorted(distributions)}, not declared")
    return missing


def test_the_product_imports_only_what_it_declares() -> None:
    assert undeclared(imported("apps", "memoryhub"), declared()) == []


def test_the_tests_benchmarks_and_tools_import_only_what_dev_declares() -> None:
    allowed = declared("dev", "loadtest") | {"memoryhub-client"}
    assert undeclared(imported("tests", "bench", "tools"), allowed) == []


def test_the_check_finds_an_undeclared_import() -> None:
    assert undeclared({"psutil": "x.py"}, {"django"}) == [
        "psutil (x.py): from ['psutil'], not declared"
    ]
