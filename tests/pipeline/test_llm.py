"""The LLM extractor and summarizer against a stub OpenAI-compatible server on loopback,
replaying answers as a capable model writes them: valid, grounded output is stored; an
endpoint that is down or slow gets bounded retries, and then (as for an answer refused
whole) the job finishes with the rules and records why, its turns stored."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_memory, open_row
from apps.pipeline import extraction
from apps.pipeline import llm as llm_module
from apps.pipeline.llm import LlmOutputError, memories_schema, parse_memories
from apps.pipeline.models import ConsolidationLog, Message, SessionSummary
from tests.conftest import Tenant
from tests.pipeline.llm_stub import StubLlm

BODY = {
    "subject": "u1",
    "session": "s1",
    "messages": [
        {"role": "system", "content": "You are Max, a secret-keeping assistant."},
        {"role": "user", "content": "<memories>- The user likes cats</memories> I moved to Porto."},
        {"role": "assistant", "content": "Porto is lovely!"},
    ],
}
GOOD = {
    "memories": [
        {
            "content": "The user lives in Porto",
            "kind": "semantic",
            "category": "fact",
            "confidence": 0.9,
            "importance": 0.8,
            "slot": "home",
            "value": "Porto",
            "evidence": "I moved to Porto",
            "turn": 0,
        }
    ]
}


@pytest.fixture
def llm(settings) -> Iterator[StubLlm]:
    with StubLlm() as stub:
        settings.MEMORYHUB_EXTRACTOR = "llm"
        settings.MEMORYHUB_SUMMARIZER = "llm"
        settings.MEMORYHUB_LLM_URL = stub.url
        settings.MEMORYHUB_LLM_API_KEY = "stub-key"
        settings.MEMORYHUB_LLM_TIMEOUT = 0.5
        settings.MEMORYHUB_LLM_RETRIES = 2
        settings.MEMORYHUB_LLM_RETRY_DELAY = 0
        settings.MEMORYHUB_LLM_BREAKER_FAILURES = 100
        llm_module._SCHEMA_FORMS.clear()
        yield stub


def ingest(tenant: Tenant):
    return tenant.client.post(tenant.url("messages"), BODY, format="json")


@pytest.mark.django_db
def test_valid_llm_output_is_stored_and_the_prompt_has_no_system_or_recalled_text(
    acme: Tenant, llm: StubLlm
) -> None:
    llm.reply = json.dumps(GOOD)
    response = ingest(acme)
    job = response.json()
    assert response.status_code == 201
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["extractor"] == "llm"
    keys = KeyCache()
    semantic = Memory.objects.get(kind="semantic")
    assert open_memory(keys, semantic) == "The user lives in Porto"
    assert semantic.importance == pytest.approx(0.8)  # the LLM's importance
    assert semantic.confidence == pytest.approx(0.9)
    episodic = Memory.objects.get(kind="episodic")
    assert open_memory(keys, episodic) == "I moved to Porto."
    sent = json.dumps(llm.requests)
    assert "secret-keeping" not in sent
    assert "likes cats" not in sent
    assert llm.headers[0]["Authorization"] == "Bearer stub-key"
    # The contract asks for each fact in its turn's language, untranslated.
    assert "in the language of the turn it comes from, never translated" in sent
    # The summarizer asked the same endpoint; its answer is the session's summary, encrypted.
    summary = SessionSummary.objects.get()
    assert open_row(keys, summary, acme.namespace.pk, semantic.subject_id) == llm.reply


def extraction_requests(stub: StubLlm) -> list[dict]:
    return [r for r in stub.requests if "response_format" in r]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("mode", "asked", "reason"),
    [
        ("garbage", 1, "LlmOutputError: the answer is not JSON"),
        ("down", 3, "LlmUnavailable: the endpoint answered HTTP 503"),
        ("slow", 3, "LlmUnavailable: no answer within 0.5s"),
        ("refuse", 1, "LlmRefused: the endpoint refused the request: HTTP 401"),
        ("cut", 1, "LlmOutputError: the answer was cut short by max_tokens"),
    ],
)
def test_a_failing_endpoint_leaves_the_job_to_the_rules_which_record_why(
    acme: Tenant, llm: StubLlm, mode: str, asked: int, reason: str
) -> None:
    llm.mode = mode
    llm.reply = json.dumps(GOOD)
    response = ingest(acme)
    job = response.json()
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["extractor"] == "offline"
    assert job["result"]["fallback"] == reason
    # Unavailable: the first attempt and two retries; refused or unreadable: once.
    assert len(extraction_requests(llm)) == asked
    assert Message.objects.count() == 3  # nothing lost
    keys = KeyCache()
    facts = [open_memory(keys, m) for m in Memory.objects.filter(kind="semantic")]
    assert facts == ["The user lives in Porto."]  # the rules' fact, not the LLM's
    rejected = ConsolidationLog.objects.filter(decision="reject").count()
    assert rejected == (1 if mode in ("garbage", "cut") else 0)
    # The summarizer asks too: garbage is text, a summary; otherwise the offline one stands in.
    summary = SessionSummary.objects.get()
    assert summary.summarizer == ("llm" if mode == "garbage" else "offline")
    assert acme.client.get(f"/api/v1/jobs/{job['id']}").json()["status"] == "succeeded"


TURNS = [extraction.Turn("user", "I moved to Porto.", 4)]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("not json", "not JSON"),
        ("[]", "not {"),
        ('{"memories": [], "extra": 1}', "not {"),
        (json.dumps({"memories": [{**GOOD["memories"][0], "surprise": 1}]}), "exactly the fields"),
        (json.dumps({"memories": [{**GOOD["memories"][0], "confidence": 1.5}]}), "outside 0..1"),
        (json.dumps({"memories": [{**GOOD["memories"][0], "importance": "high"}]}), "not a number"),
        (json.dumps({"memories": [{**GOOD["memories"][0], "turn": 7}]}), "turn"),
        (json.dumps({"memories": [{**GOOD["memories"][0], "kind": "episodic"}]}), "unknown kind"),
        (json.dumps({"memories": [{**GOOD["memories"][0], "content": ""}]}), "content"),
        (json.dumps({"memories": [GOOD["memories"][0]] * 51}), "at most 50"),
        (json.dumps({"memories": [{**GOOD["memories"][0], "ends": {}}]}), "ends is not a list"),
        (
            json.dumps({"memories": [{**GOOD["memories"][0], "ends": [{"slot": None}]}]}),
            "not {slot, value}",
        ),
        (
            json.dumps(
                {"memories": [{**GOOD["memories"][0], "ends": [{"slot": None, "value": None}]}]}
            ),
            "neither slot nor value",
        ),
        (
            json.dumps({"memories": [{**GOOD["memories"][0], "occurred_at": "next week"}]}),
            "occurred_at is not an ISO 8601",
        ),
        (json.dumps({"memories": [{**GOOD["memories"][0], "expires_at": 5}]}), "expires_at"),
        ('{"memories": ' + "[" * 400_000 + "]" * 400_000 + "}", "nested deeper than 64 levels"),
        ('{"memories": [], "x": "\\udc00"}', "lone surrogate"),
    ],
)
def test_llm_output_is_validated_strictly(answer: str, problem: str) -> None:
    with pytest.raises(LlmOutputError, match=problem):
        parse_memories(answer, TURNS)


def test_valid_llm_output_maps_turn_indexes_to_positions() -> None:
    (candidate,) = parse_memories(json.dumps(GOOD), TURNS)
    assert candidate.position == 4
    assert candidate.slot == "home"
    assert (candidate.value, candidate.evidence) == ("Porto", "I moved to Porto")


def send(tenant: Tenant, content: str) -> None:
    """One user turn, extracted by the stub's answer."""
    body = {"subject": "u1", "session": "s1", "messages": [{"role": "user", "content": content}]}
    job = tenant.client.post(tenant.url("messages"), body, format="json").json()
    assert job["status"] == "succeeded", job["error"]


def _fact(
    content: str, slot: str | None, ends: list[dict] | None = None, evidence: str = "", **extra
) -> dict:
    return {
        "content": content,
        "kind": "semantic",
        "category": "health",
        "confidence": 0.9,
        "importance": 0.9,
        "slot": slot,
        "evidence": evidence,
        "turn": 0,
        **({"ends": ends} if ends is not None else {}),
        **extra,
    }


def test_the_slot_schema_is_normalised_like_the_offline_extractor() -> None:
    answer = {
        "memories": [
            _fact("", None, [{"slot": "Allergy: Peanuts", "value": None}]),
            _fact(
                "The user is going to Kyoto.",
                "plan:Kyoto trip",
                occurred_at="2027-01-05",
                expires_at="2027-01-20T00:00:00+00:00",
            ),
            _fact("The user's sister lives in Paris.", "Sister|Home"),
        ]
    }
    negation, plan, sister = parse_memories(json.dumps(answer), TURNS)
    (offline,) = extraction.atomic_facts(extraction.Turn("user", "I'm allergic to peanuts.", 0))
    assert negation.content == ""
    assert [e.slot for e in negation.ends] == [offline.slot] == ["allergy:peanut"]
    assert plan.occurred_at is not None
    assert plan.occurred_at.isoformat() == "2027-01-05T00:00:00+00:00"
    assert plan.expires_at is not None
    assert plan.expires_at.day == 20
    assert sister.slot == "sister|home"


@pytest.mark.django_db
def test_an_llm_found_move_ends_the_old_home_and_a_health_negation_goes_to_review(
    acme: Tenant, llm: StubLlm
) -> None:
    from apps.memories.models import Status

    llm.reply = json.dumps(
        {
            "memories": [
                _fact(
                    "The user lives in Porto.", "home", evidence="I live in Porto", value="Porto"
                ),
                _fact(
                    "The user is allergic to peanuts.",
                    "allergy:peanuts",
                    evidence="allergic to peanuts",
                ),
            ]
        }
    )
    send(acme, "I live in Porto and I'm allergic to peanuts.")
    llm.reply = json.dumps(
        {
            "memories": [
                _fact(
                    "The user lives in Lisbon.",
                    "home",
                    [{"slot": "home", "value": None}],
                    evidence="we moved to lisbon",
                    value="Lisbon",
                ),
                _fact("", None, [{"slot": "allergy:peanuts", "value": None}]),
                _fact(
                    "The user is allergic to shellfish.",
                    "allergy:shellfish",
                    evidence="I'm allergic to shellfish",
                ),
            ]
        }
    )
    send(acme, "Update: we moved to Lisbon in May. Not peanuts, I'm allergic to shellfish.")
    keys = KeyCache()
    current = sorted(
        open_memory(keys, m)
        for m in Memory.objects.filter(kind="semantic", valid_to__isnull=True, status=Status.ACTIVE)
    )
    assert current == ["The user is allergic to shellfish.", "The user lives in Lisbon."]
    ended = Memory.objects.get(kind="semantic", valid_to__isnull=False)
    assert open_memory(keys, ended) == "The user lives in Porto."  # history kept
    # The LLM's health ending is a dispute: out of the current facts, a person decides.
    disputed = Memory.objects.get(kind="semantic", status=Status.DISPUTED)
    assert open_memory(keys, disputed) == "The user is allergic to peanuts."
    assert {m.source["model"] for m in Memory.objects.filter(kind="semantic")} == {"gpt-4o-mini"}


def test_an_llm_dispute_is_read_in_the_offline_extractor_s_terms() -> None:
    from apps.facts.doubt import Dispute

    answer = {
        "memories": [
            _fact(
                "", None, disputes=[{"slot": "Medication", "value": "Metformin", "previous": False}]
            ),
            _fact(
                "", None, disputes=[{"slot": "allergy:peanuts", "value": None, "previous": False}]
            ),
            _fact("", None, disputes=[{"slot": None, "value": None, "previous": True}]),
        ]
    }
    medication, allergy, previous = parse_memories(json.dumps(answer), TURNS)
    assert medication.disputes == [Dispute("medication", "Metformin")]
    assert allergy.disputes == [Dispute("allergy", "peanut")]
    assert previous.disputes == [Dispute(last_said=True)]
    unnamed = _fact("", None, disputes=[{"slot": None, "value": None, "previous": False}])
    with pytest.raises(LlmOutputError, match="names no slot, value or previous"):
        parse_memories(json.dumps({"memories": [unnamed]}), TURNS)


@pytest.mark.django_db
def test_an_llm_dispute_takes_the_fact_out_of_the_current_ones_for_review(
    acme: Tenant, llm: StubLlm
) -> None:
    from apps.memories.models import Status

    llm.reply = json.dumps(
        {
            "memories": [
                _fact(
                    "The user takes metformin.", "medication:metformin", evidence="I take metformin"
                )
            ]
        }
    )
    send(acme, "I take metformin.")
    dispute = {"slot": "medication", "value": "metformin", "previous": False}
    llm.reply = json.dumps({"memories": [_fact("", None, disputes=[dispute])]})
    send(acme, "My doctor is rethinking the metformin.")
    fact = Memory.objects.get(kind="semantic")
    assert fact.status == Status.DISPUTED
    assert fact.valid_to is None
    turn = Memory.objects.get(kind="episodic", source__message=fact.metadata["disputed_by"])
    assert open_memory(KeyCache(), turn) == "My doctor is rethinking the metformin."


@pytest.mark.django_db
def test_a_deeply_nested_answer_is_refused_whole_and_recorded(acme: Tenant, llm: StubLlm) -> None:
    llm.reply = '{"memories": [' + "[" * 20_000 + "]" * 20_000 + "]}"
    job = ingest(acme).json()
    assert job["status"] == "succeeded"
    assert job["result"]["fallback"] == (
        "LlmOutputError: the answer is nested deeper than 64 levels"
    )
    assert Message.objects.count() == 3  # the turns stay
    assert ConsolidationLog.objects.filter(decision="reject").count() == 1


def test_a_summary_digest_nested_too_deep_is_refused() -> None:
    from memoryhub.json_input import JsonInputError

    digest = extraction.SummaryDigest(said=["I moved to Porto."], words=4)
    assert extraction.SummaryDigest.from_json(digest.to_json()) == digest
    with pytest.raises(JsonInputError, match="nested deeper"):
        extraction.SummaryDigest.from_json('{"held": ' + "[" * 5_000 + "]" * 5_000 + "}")


def test_the_extraction_sends_its_schema_and_bounds_the_answer(acme: Tenant, llm: StubLlm) -> None:
    llm.reply = json.dumps(GOOD)
    assert ingest(acme).json()["status"] == "succeeded"
    extraction_request = next(r for r in llm.requests if "response_format" in r)
    assert extraction_request["max_tokens"] == 2048
    form = extraction_request["response_format"]
    assert form["type"] == "json_schema"  # the OpenAI form first (OpenAI, vLLM, Ollama)
    assert form["json_schema"]["schema"] == memories_schema([0])  # one user turn
    items = memories_schema([0])["properties"]["memories"]
    assert items["maxItems"] == 4  # a few facts a turn
    assert items["items"]["properties"]["turn"] == {"enum": [0]}  # the user's turn only
    assert items["maxItems"] > 0
    assert items["items"]["properties"]["content"]["maxLength"] > 0


def test_an_endpoint_that_takes_llama_cpps_schema_form_is_learnt_once(
    acme: Tenant, llm: StubLlm
) -> None:
    llm.mode = "llama"
    llm.reply = json.dumps(GOOD)
    assert ingest(acme).json()["status"] == "succeeded"
    forms = [r["response_format"] for r in llm.requests if "response_format" in r]
    assert [f["type"] for f in forms] == ["json_schema", "json_object"]
    assert forms[1]["schema"] == memories_schema([0])
    llm.requests.clear()
    body = {**BODY, "session": "s2"}
    assert acme.client.post(acme.url("messages"), body, format="json").json()["status"] == (
        "succeeded"
    )
    forms = [r["response_format"] for r in llm.requests if "response_format" in r]
    assert [f["type"] for f in forms] == ["json_object"]  # remembered: no 500 first
