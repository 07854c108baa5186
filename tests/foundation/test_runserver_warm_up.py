"""`manage.py runserver` (as `make run` starts it) loads the local embedding models before it
serves, in the process that serves, and still serves static files."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.staticfiles.management.commands.runserver import (
    Command as StaticFilesRunserverCommand,
)
from django.core.management import get_commands, load_command_class

from apps.memories.management.commands import runserver


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the command did, in order: "load" (the models), "serve" (staticfiles' runserver)."""
    done: list[str] = []

    def serve(self: Any, *args: Any, **options: Any) -> None:
        done.append("serve")

    monkeypatch.setattr(StaticFilesRunserverCommand, "inner_run", serve)
    monkeypatch.setattr(runserver, "warm_up_embedding_models", lambda: done.append("load") or True)
    return done


def test_it_is_the_runserver_django_runs_and_it_serves_static_files() -> None:
    app = get_commands()["runserver"]
    assert app == "apps.memories"
    assert isinstance(load_command_class(app, "runserver"), StaticFilesRunserverCommand)


def test_it_loads_the_models_before_it_serves(steps: list[str]) -> None:
    output = StringIO()
    runserver.Command(stdout=output).inner_run(warm_up=True)
    assert steps == ["load", "serve"]
    assert "Embedding models loaded" in output.getvalue()


def test_it_serves_without_loading_when_told_not_to(steps: list[str]) -> None:
    runserver.Command(stdout=StringIO()).inner_run(warm_up=False)
    assert steps == ["serve"]


def test_it_serves_when_the_models_fail_to_load(
    steps: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail() -> bool:
        raise OSError("no model files")

    monkeypatch.setattr(runserver, "warm_up_embedding_models", fail)
    errors = StringIO()
    runserver.Command(stdout=StringIO(), stderr=errors).inner_run(warm_up=True)
    assert steps == ["serve"]
    assert "did not load" in errors.getvalue()
