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
# Product modules that import an optional extra's package, when called (never the server):
# the file, and the extra that declares what it imports.
OPTIONAL = {"apps/mem0_bridge/oss.py": "mem0"}


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
            if "migrations" in path.parts or where in OWN_ENVIRONMENT or where in OPTIONAL:
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


def test_an_optional_module_imports_only_what_its_extra_declares() -> None:
    for where, extra in OPTIONAL.items():
        found = {
            module: where
            for module in _imports_of(ROOT / where)
            if module not in sys.stdlib_module_names | FIRST_PARTY
        }
        assert undeclared(found, declared(extra)) == []


def test_the_server_never_imports_mem0() -> None:
    """Only the import command's --oss path does, inside a function (the package is the
    `mem0` extra's): no module of the product imports it at its top."""
    for path in (ROOT / "apps").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        tops = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        assert "mem0" not in {_module(n).split(".")[0] for n in tops}, path
    assert set(_imports_of(ROOT / "apps/mem0_bridge/oss.py")) & {"mem0"}


def _module(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.Import):
        return node.names[0].name
    return node.module or ""


def _imports_of(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_tests_benchmarks_and_tools_import_only_what_dev_declares() -> None:
    allowed = declared("dev", "loadtest") | {"memoryhub-client"}
    assert undeclared(imported("tests", "bench", "tools"), allowed) == []


def test_the_check_finds_an_undeclared_import() -> None:
    assert undeclared({"psutil": "x.py"}, {"django"}) == [
        "psutil (x.py): from ['psutil'], not declared"
    ]
