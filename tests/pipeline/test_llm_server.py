"""The local LLM endpoint (llama.cpp's server with SmolLM2-135M, `make llm`), for real: it
answers the OpenAI protocol, keeps a completion to a JSON schema when asked in llama.cpp's
form, and the LLM extractor's job finishes through it. The llm lane: the tests ask for the
`llm_server` fixture, which skips without the package or the model (fails under
MEMORYHUB_REQUIRE_LLM=1).

The 135M model's answers are schema-valid nonsense, and depend on the request before (the
prompt cache): the tests assert the protocol and the guardrails, never the model's words."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import jsonschema
import pytest
from django.core.management import CommandError, call_command

from apps.memories.models import Memory
from apps.pipeline.llm_server import LlmServer
from apps.pipeline.models import ConsolidationLog, Message
from tests.conftest import Tenant

# llama.cpp turns this into a grammar: the enum, the required keys, maxItems and maxLength
# are enforced while the model writes. maxLength and max_tokens bound a model that would
# otherwise repeat itself until the context is full.
PROFILE = {
    "type": "object",
    "properties": {
        "diet": {"type": "string", "enum": ["vegan", "vegetarian", "omnivore"]},
        "pets": {
            "type": "array",
            "items": {"type": "string", "maxLength": 20},
            "maxItems": 3,
        },
    },
    "required": ["diet", "pets"],
}


def chat(server: LlmServer, body: dict[str, object]) -> httpx.Response:
    return httpx.post(f"{server.url}/chat/completions", json=body, timeout=60)


def test_it_lists_its_model(llm_server: LlmServer) -> None:
    response = httpx.get(f"{llm_server.url}/models", timeout=5)
    assert response.status_code == 200
    assert [model["id"] for model in response.json()["data"]] == [llm_server.model_name]


def test_it_keeps_a_completion_to_a_json_schema(llm_server: LlmServer) -> None:
    response = chat(
        llm_server,
        {
            "model": llm_server.model_name,
            "messages": [
                {"role": "system", "content": "Answer in JSON: the user's diet and pets."},
                {"role": "user", "content": "I eat no meat and I have a cat called Miso."},
            ],
            "response_format": {"type": "json_object", "schema": PROFILE},
            "temperature": 0,
            "max_tokens": 80,
        },
    )
    assert response.status_code == 200
    answer = json.loads(response.json()["choices"][0]["message"]["content"])
    jsonschema.validate(answer, PROFILE)


@pytest.mark.django_db
def test_the_llm_extractor_job_finishes_through_it(
    acme: Tenant, llm_server: LlmServer, settings
) -> None:
    """Whatever the model answers, the job ends: its memories stored when the answer has the
    expected shape, or refused as a whole (nothing of it stored) when it has not. The turn is
    stored either way."""
    settings.MEMORYHUB_EXTRACTOR = "llm"
    settings.MEMORYHUB_LLM_URL = llm_server.url
    settings.MEMORYHUB_LLM_MODEL = llm_server.model_name
    settings.MEMORYHUB_LLM_API_KEY = None
    settings.MEMORYHUB_LLM_TIMEOUT = 90
    settings.MEMORYHUB_JOB_RETRIES = 0
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": [{"role": "user", "content": "I moved to Porto and I work as a nurse."}],
    }
    response = acme.client.post(acme.url("messages"), body, format="json")
    job = response.json()
    assert response.status_code == 201
    assert Message.objects.count() == 1
    print("LLM job:", job["status"], job.get("error", ""))  # shown with -s
    if job["status"] == "succeeded":
        assert job["result"]["extractor"] == "llm"
        assert Memory.objects.filter(kind="episodic").count() == 1
    else:
        assert job["status"] == "failed"
        assert job["error"].startswith("invalid LLM output after 1 attempts: "), job["error"]
        assert Memory.objects.count() == 0
        assert ConsolidationLog.objects.filter(decision="reject").count() == 1


def test_the_command_says_to_run_make_llm_without_the_model(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="run `make llm`"):
        call_command("llm_server", "--model", str(tmp_path / "absent.gguf"))
