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
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from apps.facts.rules import slot_group
from apps.memories.models import Memory, Status
from apps.memories.row_encryption import KeyCache, open_memory
from apps.namespaces.models import Membership, MembershipRole
from apps.pipeline import extraction, llm_health
from apps.pipeline.llm import LlmClient, LlmExtractor, LlmOutputError
from apps.pipeline.llm_server import LlmServer, free_port
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


def use(settings, server: LlmServer, mode: str = "llm") -> None:
    settings.MEMORYHUB_EXTRACTOR = mode
    settings.MEMORYHUB_LLM_URL = server.url
    settings.MEMORYHUB_LLM_MODEL = server.model_name
    settings.MEMORYHUB_LLM_API_KEY = None
    settings.MEMORYHUB_LLM_TIMEOUT = 90
    settings.MEMORYHUB_LLM_RETRIES = 0


def send(tenant: Tenant, *turns: str) -> dict:
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": [{"role": "user", "content": turn} for turn in turns],
    }
    response = tenant.client.post(tenant.url("messages"), body, format="json")
    assert response.status_code == 201
    return response.json()


def current_facts(*, by_llm: bool = False) -> list[str]:
    keys = KeyCache()
    rows = Memory.objects.filter(kind="semantic", valid_to__isnull=True, status=Status.ACTIVE)
    return sorted(open_memory(keys, m) for m in rows if not by_llm or "model" in m.source)


@pytest.mark.django_db
def test_the_llm_extractor_job_finishes_through_it(
    acme: Tenant, llm_server: LlmServer, settings
) -> None:
    """Whatever the model answers, the job succeeds: with the LLM's grounded facts when its
    answer has the expected shape, or with the rules' when it was refused whole."""
    use(settings, llm_server)
    job = send(acme, "I moved to Porto and I work as a nurse.")
    assert job["status"] == "succeeded", job["error"]
    assert Message.objects.count() == 1
    assert Memory.objects.filter(kind="episodic").count() == 1
    print("LLM job:", job["result"]["extractor"], job["result"]["fallback"])  # shown with -s
    if job["result"]["extractor"] == "llm":
        assert job["result"]["model"] == llm_server.model_name
    else:
        assert job["result"]["fallback"].startswith("LlmOutputError: "), job["result"]
        assert ConsolidationLog.objects.filter(decision="reject").count() == 1


ORDINARY = Path(__file__).resolve().parents[1] / "facts" / "data" / "ordinary_sentences.txt"
SENSITIVE = {"medication", "allergy", "condition", "job", "employer", "home"}


def test_ordinary_sentences_yield_no_health_work_or_home_fact(llm_server: LlmServer) -> None:
    """A sample of the ordinary-sentence corpus, a sentence a call: whatever the model
    proposes, no fact about the speaker's health, work or home survives the guardrails
    (`manage.py extractor_eval` runs the whole corpus)."""
    lines = ORDINARY.read_text(encoding="utf-8").splitlines()
    corpus = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    client = LlmClient(base_url=llm_server.url, model=llm_server.model_name, timeout=90)
    extractor = LlmExtractor(client)
    invented, proposed, refused_whole = [], 0, 0
    for sentence in corpus[::40]:
        try:
            found = extractor.facts([extraction.Turn("user", sentence, 0)])
        except LlmOutputError:
            refused_whole += 1
            continue
        proposed += len(found)
        invented += [
            (sentence, c.slot)
            for c in found
            if c.content and "|" not in c.slot and slot_group(c.slot) in SENSITIVE
        ]
    print(f"kept {proposed}, refused {dict(extractor.refused)}, refused whole {refused_whole}")
    assert invented == []
    assert refused_whole < len(corpus[::40])  # the model did answer


@pytest.mark.django_db
def test_an_answer_cut_short_by_max_tokens_is_refused_whole(
    acme: Tenant, llm_server: LlmServer, settings
) -> None:
    use(settings, llm_server)
    settings.MEMORYHUB_LLM_MAX_TOKENS = 3  # no answer of the schema fits in three tokens
    job = send(acme, "I moved to Porto and I work as a nurse.")
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["extractor"] == "offline"
    assert job["result"]["fallback"] == "LlmOutputError: the answer was cut short by max_tokens"
    assert ConsolidationLog.objects.filter(decision="reject").count() == 1
    assert current_facts(by_llm=True) == []  # nothing of the cut answer
    assert current_facts() == ["The user lives in Porto.", "The user works as a nurse."]


@pytest.mark.django_db
def test_in_both_an_update_the_rules_resolve_stays_resolved_whatever_the_llm_adds(
    acme: Tenant, llm_server: LlmServer, settings
) -> None:
    use(settings, llm_server, mode="both")
    send(acme, "I live in Porto.")
    assert llm_health.counters().calls == 0  # no change cue: the rules alone
    job = send(
        acme,
        "I moved to Lisbon last month.",
        "Actually scratch what I said about the other thing, that changed too.",
    )
    assert job["status"] == "succeeded", job["error"]
    assert llm_health.counters().calls == 1  # asked about the second turn only
    homes = [f for f in current_facts() if "lives in" in f]
    assert homes == ["The user lives in Lisbon."]
    keys = KeyCache()
    ended = [open_memory(keys, m) for m in Memory.objects.filter(valid_to__isnull=False)]
    assert "The user lives in Porto." in ended


@pytest.mark.django_db
def test_the_server_killed_mid_ingest_leaves_the_jobs_to_the_rules(
    acme: Tenant, llm_server: LlmServer, settings
) -> None:
    """A server of its own, killed between two jobs of a subject's stream: the second job
    finishes with the rules and says why, and the breaker opens."""
    server = LlmServer(model=llm_server.model, port=free_port())
    server.start()
    try:
        use(settings, server)
        settings.MEMORYHUB_LLM_BREAKER_FAILURES = 1
        first = send(acme, "I live in Porto.")
        assert first["status"] == "succeeded", first["error"]
        assert not llm_health.breaker_status().open
        server.stop()
        second = send(acme, "I work as a nurse.")
    finally:
        server.stop()
    assert second["status"] == "succeeded", second["error"]
    assert second["result"]["extractor"] == "offline"
    assert second["result"]["fallback"] == (
        "LlmUnavailable: cannot reach the endpoint (ConnectError)"
    )
    status = llm_health.breaker_status()
    assert status.open
    assert "The user works as a nurse." in current_facts()
    # The dashboard says so on every page.
    owner = get_user_model().objects.create_user("owner")
    Membership.objects.create(user=owner, namespace=acme.namespace, role=MembershipRole.OWNER)
    browser = Client()
    browser.force_login(owner)
    page = browser.get(f"/n/{acme.namespace.slug}/").content.decode()
    assert "LLM extractor unreachable since" in page
    assert "rules in use" in page
    third = send(acme, "I have a cat named Miso.")  # the breaker is open: no call at all
    assert third["result"]["fallback"].startswith("BreakerOpen: ")
    assert llm_health.counters().fallbacks == 2


def test_the_command_says_to_run_make_llm_without_the_model(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="run `make llm`"):
        call_command("llm_server", "--model", str(tmp_path / "absent.gguf"))
