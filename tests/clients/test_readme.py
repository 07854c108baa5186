"""The SDK examples of the READMEs (the SDK's, and the project's "Using the API") run as
written, against the live server."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tests.conftest import Tenant

ROOT = Path(__file__).resolve().parents[2]
SDK_README = ROOT / "clients" / "python" / "README.md"
PROJECT_README = ROOT / "README.md"


def sdk_examples(readme: Path, *, integrations: bool = False) -> list[str]:
    """The README's Python blocks that use the SDK: its own calls, or (`integrations`) those
    of the framework adapters."""
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.DOTALL)
    return [
        block
        for block in blocks
        if "memoryhub_client" in block
        and ("memoryhub_client.integrations" in block) == integrations
    ]


def run(code: str, server_url: str, raw_key: str, readme: Path) -> None:
    code = code.replace("http://127.0.0.1:8000", server_url).replace("mh_…", raw_key)
    exec(compile(code, str(readme), "exec"), {"__name__": "readme"})  # noqa: S102


def test_it_runs_the_sdk_readme_examples(server_url: str, acme: Tenant, capsys) -> None:
    blocks = sdk_examples(SDK_README)
    assert len(blocks) == 2
    for code in blocks:
        run(code, server_url, acme.raw_key, SDK_README)
    printed = capsys.readouterr().out
    assert "Prefers answers in Spanish" in printed
    assert "not_found" in printed
    assert "Likes green tea" in printed


@pytest.mark.parametrize(
    ("extra", "framework", "expected"),
    [
        ("langchain", "langchain_core", ["('human', 'I moved to Lyon last week.')", "semantic"]),
        ("llama-index", "llama_index.core", ["Lives in Lyon", "- Lives in Lyon"]),
    ],
)
def test_it_runs_the_sdk_readme_integration_examples(
    server_url: str, acme: Tenant, capsys, extra: str, framework: str, expected: list[str]
) -> None:
    try:
        installed = importlib.util.find_spec(framework) is not None
    except ModuleNotFoundError:  # its parent package is missing too
        installed = False
    if not installed:
        pytest.skip(f"the SDK's {extra} extra ({framework}) is not installed")
    examples = sdk_examples(SDK_README, integrations=True)
    (code,) = [block for block in examples if f"from {framework}" in block]
    run(code, server_url, acme.raw_key, SDK_README)
    printed = capsys.readouterr().out
    for text in expected:
        assert text in printed


def test_it_runs_the_project_readme_example(
    server_url: str, acme: Tenant, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    (code,) = sdk_examples(PROJECT_README)
    monkeypatch.setenv("KEY", acme.raw_key)
    run(code, server_url, acme.raw_key, PROJECT_README)
    assert "The user lives in Lyon." in capsys.readouterr().out
