"""The house's shape: no module reaches into another module's private names, and no app holds
most of the code. (The layers and cycles are import-linter's, in `make lint`.)"""

from __future__ import annotations

import ast
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = ("apps", "memoryhub")


def _sources() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((PROJECT_ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def _module_of(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_imports(source: str, module: str) -> list[str]:
    """`module: from X import _name` for each private name imported from another module, and
    `module: X._name` for each private attribute read through an imported project module."""
    tree = ast.parse(source)
    found = []
    imported_modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not node.module.startswith(PACKAGES) or node.module == module:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{module}: from {node.module} import {alias.name}")
                else:
                    imported_modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGES):
                    imported_modules.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported_modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr != "_meta"  # a model's options: Django's public API
        ):
            found.append(f"{module}: {node.value.id}.{node.attr}")
    return found


def test_the_check_finds_a_private_name_imported_or_read() -> None:
    source = (
        "from apps.memories.services import _seal\n"
        "from apps.memories import services\n"
        "services._audit(1)\n"
    )
    assert private_imports(source, "apps.pipeline.x") == [
        "apps.pipeline.x: from apps.memories.services import _seal",
        "apps.pipeline.x: services._audit",
    ]


def test_it_imports_no_private_name_of_another_module() -> None:
    found = [
        line for path in _sources() for line in private_imports(path.read_text(), _module_of(path))
    ]
    assert found == []


def test_no_app_holds_more_than_40_percent_of_the_code() -> None:
    lines: dict[str, int] = {}
    for path in _sources():
        parts = path.relative_to(PROJECT_ROOT).parts
        if parts[0] == "apps" and len(parts) > 2:
            lines[parts[1]] = lines.get(parts[1], 0) + len(path.read_text().splitlines())
    total = sum(lines.values())
    shares = {app: round(count / total, 3) for app, count in lines.items()}
    assert len(shares) >= 10, shares
    assert max(shares.values()) <= 0.40, shares
