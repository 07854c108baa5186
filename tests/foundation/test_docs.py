"""The README and docs/ say only what the repository holds: the README stays a front door,
every relative link reaches a file of the repository, every `make` target, management
command and script they name exists, and their Python and JSON examples are well formed.
Fast: no server, no database (the SDK example is run against a server by
tests/clients/test_readme.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
# The benchmark pages are linked from the README: their links are checked too.
LINKED_PAGES = [*DOCS, ROOT / "bench" / "README.md", ROOT / "bench" / "RESULTS.md"]

FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`([^`\n]+)`")
MAKE_TARGET = re.compile(r"(?:^|[\s;&|(])make ([a-z][\w-]*)")
MANAGE_COMMAND = re.compile(r"manage\.py ([a-z][a-z0-9_]*)")
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:apps|bench|clients|memoryhub|tests|docs)/[\w./-]*\w\.(?:py|jsonl|json|txt|md))(?!\w)"
)


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def blocks(path: Path) -> list[tuple[str, str]]:
    """The fenced code blocks of a page, as (language, code)."""
    return FENCE.findall(path.read_text(encoding="utf-8"))


def prose(path: Path) -> str:
    """The page without its fenced code blocks."""
    return FENCE.sub("", path.read_text(encoding="utf-8"))


def code(path: Path) -> str:
    """What a reader would type: the fenced blocks and the inline code spans."""
    spans = INLINE_CODE.findall(prose(path))
    return "\n".join([*(block for _, block in blocks(path)), *spans])


def test_it_keeps_the_readme_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines; move the details to docs/"
    text = README.read_text(encoding="utf-8")
    assert "make run" in text
    assert "make test" in text
    for page in DOCS[1:]:  # the README maps every page of docs/
        assert f"(docs/{page.name})" in text, f"README.md does not link docs/{page.name}"


@pytest.mark.parametrize("page", LINKED_PAGES, ids=relative)
def test_its_links_reach_files_of_the_repository(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address, or a place in the same page
        resolved = (page.parent / target.split("#")[0]).resolve()
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif not resolved.exists():
            broken.append(f"{target}: no such file")
    assert broken == [], f"{relative(page)}: {broken}"


@pytest.mark.parametrize("page", LINKED_PAGES, ids=relative)
def test_it_names_no_design_document_outside_the_repository(page: Path) -> None:
    assert "shared/design" not in page.read_text(encoding="utf-8")


def makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", text, flags=re.MULTILINE))


@pytest.mark.parametrize("page", DOCS, ids=relative)
def test_its_make_targets_exist(page: Path) -> None:
    named = set(MAKE_TARGET.findall(code(page)))
    assert named - makefile_targets() == set()


@pytest.mark.parametrize("page", DOCS, ids=relative)
def test_its_management_commands_exist(page: Path) -> None:
    named = set(MANAGE_COMMAND.findall(page.read_text(encoding="utf-8")))
    assert named - set(get_commands()) == set()


def test_the_listed_management_commands_exist() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    listing = text[text.index("Management commands:") :].split(".\n")[0]
    named = {span.split()[0] for span in INLINE_CODE.findall(listing)}
    assert named, "docs/api.md lists no management command"
    assert named - set(get_commands()) == set()


@pytest.mark.parametrize("page", LINKED_PAGES, ids=relative)
def test_the_files_it_names_exist(page: Path) -> None:
    """`python bench/<x>.py`, `tests/…/test_x.py`, `apps/…/data/eval.jsonl`: every path of the
    repository a page names."""
    named = set(REPO_PATH.findall(page.read_text(encoding="utf-8")))
    assert sorted(path for path in named if not (ROOT / path).exists()) == []


def test_the_benchmark_scripts_it_runs_exist() -> None:
    scripts = {
        script
        for page in LINKED_PAGES
        for script in re.findall(
            r"(?:python |`)(bench/[\w/]+\.py)", page.read_text(encoding="utf-8")
        )
    }
    assert scripts, "no page runs a benchmark script"
    assert sorted(script for script in scripts if not (ROOT / script).is_file()) == []


@pytest.mark.parametrize("page", DOCS, ids=relative)
def test_its_python_examples_compile_and_its_json_examples_parse(page: Path) -> None:
    for language, block in blocks(page):
        if language == "python":
            compile(block, relative(page), "exec")
        elif language == "json":
            json.loads(block)


@pytest.mark.parametrize("page", LINKED_PAGES, ids=relative)
def test_it_speaks_of_the_product_not_of_who_measured_it(page: Path) -> None:
    text = page.read_text(encoding="utf-8").lower()
    said = re.findall(
        r"\bwe (?:measured|found|ran|tried|saw)\b|\bthis (?:session|round)\b"
        r"|\b(?:first|second|third|fourth|fifth) session\b|\bthe issue's\b",
        text,
    )
    assert said == []
