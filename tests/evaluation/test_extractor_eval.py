"""`manage.py extractor_eval`: the rules, the LLM and both side by side, in one table. The
LLM here is a loopback stub that proposes an ungrounded fact for every turn: the table counts
the calls and the refusals, and the facts stay the rules'."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from tests.pipeline.llm_stub import StubLlm

UNGROUNDED = {
    "content": "The user takes notes.",
    "kind": "semantic",
    "category": "health",
    "confidence": 0.9,
    "importance": 0.9,
    "slot": "medication",
    "value": "notes",
    "evidence": "I take notes every day",
    "turn": 0,
}


def run(*args: str) -> tuple[list[str], list[dict]]:
    out = StringIO()
    call_command("extractor_eval", "--sets", "scenarios", "--limit", "3", "--locomo-turns", "0",
                 "--json", *args,
                 stdout=out, stderr=StringIO())  # fmt: skip
    lines = out.getvalue().splitlines()
    return lines[:-1], json.loads(lines[-1])


@pytest.mark.django_db(transaction=True)
def test_the_rules_alone_without_an_endpoint(settings) -> None:
    settings.MEMORYHUB_LLM_URL = None
    table, figures = run()
    assert table[0].split("|")[1].strip() == "rules"
    assert [f["mode"] for f in figures] == ["offline"]
    (rules,) = figures
    assert rules["scenarios"] == 3
    assert rules["sentences"] == 3
    assert rules["calls"] == 0
    assert any(line.startswith("scenarios fully right") for line in table)


@pytest.mark.django_db(transaction=True)
def test_rules_llm_and_both_side_by_side() -> None:
    with StubLlm() as stub:
        stub.reply = json.dumps({"memories": [UNGROUNDED]})
        table, figures = run("--endpoint", stub.url, "--model", "stub")
    header = [cell.strip() for cell in table[0].split("|")[1:]]
    assert header == ["rules", "llm (stub)", "both (stub)"]
    rules, llm, both = figures
    assert rules["calls"] == 0
    assert llm["calls"] > 0
    # The stub's fact is in none of its turns: refused each time, never stored.
    assert llm["refused"]["ungrounded"] == llm["calls"]
    assert llm["invented"] == []
    assert both["calls"] < llm["calls"]  # the LLM only where the rules left a change open
    assert llm["health_left_current"] == both["health_left_current"] == 0
