"""`manage.py runserver` (as `make run` starts it) warms up before it serves
(memoryhub/warm_up.py), in the process that serves, and still serves static files."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.staticfiles.management.commands.runserver import (
    Command as StaticFilesRunserverCommand,
)
from django.core.management import get_commands, load_command_class

from apps.memories.management.commands import runserver
from memoryhub.warm_up import WarmUpReport


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the command did, in order: "warm up", "serve" (staticfiles' runserver)."""
    done: list[str] = []

    def serve(self: Any, *args: Any, **options: Any) -> None:
        done.append("serve")

    def warm_up() -> WarmUpReport:
        done.append("warm up")
        return WarmUpReport(seconds={"embedding models": 4.2, "templates": 0.3})

    monkeypatch.setattr(StaticFilesRunserverCommand, "inner_run", serve)
    monkeypatch.setattr(runserver, "warm_up", warm_up)
    return done


def test_it_is_the_runserver_django_runs_and_it_serves_static_files() -> None:
    app = get_commands()["runserver"]
    assert app == "apps.memories"
    assert isinstance(load_command_class(app, "runserver"), StaticFilesRunserverCommand)


def test_it_warms_up_before_it_serves(steps: list[str]) -> None:
    output = StringIO()
    runserver.Command(stdout=output).inner_run(warm_up=True)
    assert steps == ["warm up", "serve"]
    said = output.getvalue()
    assert "Warming up before serving (URLs and translations, templates, embedding models" in said
    assert "embedding models 4.2 s, templates 0.3 s" in said


def test_it_serves_without_warming_up_when_told_not_to(steps: list[str]) -> None:
    runserver.Command(stdout=StringIO()).inner_run(warm_up=False)
    assert steps == ["serve"]


def test_it_serves_when_a_step_fails(steps: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def warm_up() -> WarmUpReport:
        return WarmUpReport(seconds={"templates": 0.3}, failed={"embedding models": "OSError"})

    monkeypatch.setattr(runserver, "warm_up", warm_up)
    output, errors = StringIO(), StringIO()
    runserver.Command(stdout=output, stderr=errors).inner_run(warm_up=True)
    assert steps == ["serve"]
    assert "warm-up step failed" in errors.getvalue()
    assert "failed: embedding models (OSError)" in output.getvalue()
