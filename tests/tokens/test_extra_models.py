"""MEMORYHUB_EXTRA_MODELS (JSON) adds models to the model table or replaces entries, with their
tokenizer, context window and price; a value that is not a JSON object of models stops
start-up with ImproperlyConfigured naming the variable. Settings are read once per process,
so the environment is read in a fresh interpreter, and its table is built here from that
process's setting."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from typing import Any

import pytest

from apps.tokens.tokenizers import model_table
from tests.conftest import run_python

EXTRA = {
    "acme-llm-7b": {
        "tokenizer": "cl100k_base",
        "context_window": 8192,
        "input_usd_per_mtok": 0.25,
        "family": "open",
    },
    # An existing entry, replaced: a new price.
    "gpt-4o": {"tokenizer": "o200k_base", "context_window": 128000, "input_usd_per_mtok": 2.0},
}


def models_setting_with(extra: str) -> dict[str, dict]:
    """MEMORYHUB_MODELS as the settings of a fresh process make it with this environment."""
    result = run_python(
        "import json; from django.conf import settings; "
        "print(json.dumps(settings.MEMORYHUB_MODELS))",
        env={"MEMORYHUB_EXTRA_MODELS": extra},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def extended() -> dict[str, dict]:
    return models_setting_with(json.dumps(EXTRA))


def table_of(models: dict[str, dict], settings: Any) -> dict[str, dict]:
    """The model table the app builds from that setting, as plain values."""
    settings.MEMORYHUB_MODELS = models
    return {
        name: dataclasses.asdict(info) | {"exact": info.exact}
        for name, info in model_table().items()
    }


def start_up_with(extra: str) -> subprocess.CompletedProcess[str]:
    return run_python(
        "from django.conf import settings; settings.MEMORYHUB_MODELS",
        env={"MEMORYHUB_EXTRA_MODELS": extra},
    )


def test_an_extra_model_joins_the_table_with_its_tokenizer_window_and_price(
    extended: dict[str, dict], settings
) -> None:
    table = table_of(extended, settings)
    assert table["acme-llm-7b"] == {
        "name": "acme-llm-7b",
        "tokenizer": "cl100k_base",
        "context_window": 8192,
        "input_usd_per_mtok": 0.25,
        "family": "open",
        "exact": False,  # an open model counted with an OpenAI encoding: not exact
    }


def test_an_extra_entry_replaces_a_built_in_one_and_the_others_stay(
    extended: dict[str, dict], settings
) -> None:
    table = table_of(extended, settings)
    assert table["gpt-4o"]["input_usd_per_mtok"] == 2.0
    assert table["gpt-4o"]["family"] == "openai"  # the default family
    assert table["gpt-4o"]["exact"] is True
    assert {"gpt-4o-mini", "claude-sonnet-4", "llama-3.1-8b-instruct"} <= set(table)


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_without_extra_models_the_built_in_table_is_unchanged(settings) -> None:
    table = table_of(models_setting_with(""), settings)
    assert "acme-llm-7b" not in table
    assert table["gpt-4o"]["input_usd_per_mtok"] == 2.5


@pytest.mark.parametrize(
    "value",
    ['{"acme-llm-7b": {"tokenizer": ', '["acme-llm-7b"]', "acme-llm-7b"],
    ids=["truncated", "a-list", "a-bare-name"],
)
@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_a_value_that_is_not_a_json_object_stops_start_up(value: str) -> None:
    result = start_up_with(value)
    assert result.returncode != 0
    assert "ImproperlyConfigured: MEMORYHUB_EXTRA_MODELS" in result.stderr


@pytest.mark.parametrize(
    "value",
    ['{"acme-llm-7b": {"tokenizer": "cl100k_base"}}', '{"acme-llm-7b": 5}'],
    ids=["no-window-or-price", "not-an-object"],
)
@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_a_malformed_model_entry_stops_start_up(value: str) -> None:
    result = start_up_with(value)
    assert result.returncode != 0
    assert "ImproperlyConfigured: MEMORYHUB_EXTRA_MODELS" in result.stderr
