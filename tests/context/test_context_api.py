"""POST /context: strategies, sections, dropped items, exact totals, errors, recall log."""

from __future__ import annotations

import pytest

from apps.audit.actors import Actor
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memory_create
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.models import Session
from apps.recall.models import RecallLog
from apps.tokens.tokenizers import message_tokens, tokenizer_for
from tests.conftest import Tenant, api_client, make_api_key

ACTOR = Actor.system("tests")
TURNS = [
    ("user", "Hi, I am planning a trip to Kyoto in April with my sister Ana."),
    ("assistant", "Lovely! Do you want temple or food recommendations?"),
    ("user", "Food first. I am allergic to peanuts, so please keep that in mind."),
    ("assistant", "Noted: no peanuts. Kyoto has great tofu and soba places."),
    ("user", "My favourite colour is green, by the way."),
    ("assistant", "Green it is. Shall I plan the first day?"),
]


@pytest.fixture
def conversation(acme: Tenant) -> Tenant:
    memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(
            subject_external_id="u1",
            content="Answer in short bullet points.",
            kind="procedural",
            importance=0.9,
        ),
    )
    memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(
            subject_external_id=None, content="Our travel desk is open 9 to 5 on weekdays."
        ),
    )
    memory_create(
        actor=ACTOR,
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u1", content="The user prefers trains to planes."),
    )
    messages_ingest(
        actor=ACTOR,
        namespace=acme.namespace,
        subject_external_id="u1",
        session_external_id="trip",
        messages=[IncomingMessage(role, text) for role, text in TURNS],
    )
    return acme


def ask(tenant: Tenant, **fields):
    body = {
        "subject": "u1",
        "session": "trip",
        "query": "Where should we eat on day one?",
        "model": "gpt-4o",
        "system_prompt": "You are a travel assistant.",
    } | fields
    return tenant.client.post(tenant.url("context"), body, format="json")


def section(result: dict, name: str) -> dict:
    return next(s for s in result["sections"] if s["name"] == name)


@pytest.mark.django_db
def test_buffer_keeps_every_turn_and_the_total_is_exact(conversation: Tenant) -> None:
    response = ask(conversation, strategy="buffer")
    assert response.status_code == 200, response.json()
    result = response.json()
    messages = result["messages"]
    assert messages[0]["role"] == "system"
    assert messages[0]["content"].startswith("You are a travel assistant.")
    assert "Answer in short bullet points." in messages[0]["content"]
    assert "<memories>" in messages[0]["content"]
    assert "travel desk is open 9 to 5" in messages[0]["content"]  # shared memory
    assert [m["content"] for m in messages[1:-1]] == [text for _, text in TURNS]
    assert messages[-1] == {"role": "user", "content": "Where should we eat on day one?"}
    assert result["tokenizer"] == "o200k_base"
    assert result["exact"] is True
    assert result["total_tokens"] == message_tokens(messages, tokenizer_for("o200k_base"))
    assert result["total_tokens"] <= result["budget_tokens"] == 128_000 - 1024
    assert result["cost_usd"] == pytest.approx(result["total_tokens"] * 2.5 / 1e6)
    assert section(result, "summary")["items"] == []
    memories = section(result, "memories")["items"]
    assert memories
    assert set(memories[0]["components"]) >= {"vector", "keyword", "final"}


@pytest.mark.django_db
def test_window_keeps_the_last_n_turns_and_reports_the_rest(conversation: Tenant) -> None:
    result = ask(conversation, strategy="window", window=2).json()
    assert [m["content"] for m in result["messages"][1:-1]] == [TURNS[4][1], TURNS[5][1]]
    assert sorted(d["id"] for d in result["dropped"] if d["reason"] == "window") == [
        "0",
        "1",
        "2",
        "3",
    ]


@pytest.mark.django_db
def test_summary_replaces_the_turns_with_the_session_summary(conversation: Tenant) -> None:
    result = ask(conversation, strategy="summary").json()
    assert [m["role"] for m in result["messages"]] == ["system", "user"]
    assert "## Earlier in this conversation (summary)" in result["messages"][0]["content"]
    assert "Kyoto" in result["messages"][0]["content"]
    assert section(result, "summary")["tokens"] > 0
    summarized = [d for d in result["dropped"] if d["section"] == "turns"]
    assert {d["reason"] for d in summarized} == {"summarized"}
    assert len(summarized) == len(TURNS)  # the summary covers all six turns
    assert all(d["tokens"] > 0 for d in summarized)


@pytest.mark.django_db
def test_summary_sends_the_turns_it_does_not_cover_yet_verbatim(conversation: Tenant) -> None:
    from apps.pipeline.models import Message

    session = Session.objects.get(external_id="trip")
    later = Message(
        namespace_id=session.namespace_id, session=session, position=6, role="user", token_count=3
    )
    from apps.memories.row_encryption import KeyCache, seal_row

    seal_row(KeyCache(), later, session.namespace_id, session.subject_id, "And dessert ideas?")
    later.save()  # stored, not summarized yet (its job has not run)
    result = ask(conversation, strategy="summary").json()
    assert [m["content"] for m in result["messages"][1:]] == [
        "And dessert ideas?",
        "Where should we eat on day one?",
    ]


@pytest.mark.django_db
def test_a_turn_sent_verbatim_is_not_recalled_again(conversation: Tenant) -> None:
    result = ask(conversation, strategy="buffer", query="peanuts allergy").json()
    system = result["messages"][0]["content"]
    assert "I am allergic to peanuts" not in system  # it is in the turns below
    window = ask(conversation, strategy="window", window=1, query="peanuts allergy").json()
    assert "I am allergic to peanuts" in window["messages"][0]["content"]  # recalled instead


@pytest.mark.django_db
def test_summary_buffer_keeps_the_summary_and_recent_turns_within_their_cap(
    conversation: Tenant,
) -> None:
    result = ask(conversation, strategy="summary_buffer", buffer_tokens=40).json()
    turns = section(result, "turns")
    assert 0 < sum(item["tokens"] for item in turns["items"]) <= 40
    assert turns["items"][-1]["id"] == "5"  # the newest turn is kept
    assert section(result, "summary")["items"]
    older = [d for d in result["dropped"] if d["section"] == "turns"]
    assert {d["reason"] for d in older} == {"summarized"}
    # The summary covers only the turns older than the buffer: never one sent verbatim.
    buffered = {item["id"] for item in turns["items"]}
    assert buffered.isdisjoint(d["id"] for d in older)
    assert "4" in buffered  # "My favourite colour is green"
    system = result["messages"][0]["content"]
    summary_part = system.split("## Earlier in this conversation (summary)", 1)[1]
    assert "green" not in summary_part
    assert "allergic to peanuts" in summary_part  # turn 2, older than the buffer


@pytest.mark.django_db
def test_summary_buffer_sends_no_summary_when_every_turn_fits(conversation: Tenant) -> None:
    result = ask(conversation, strategy="summary_buffer", buffer_tokens=2000).json()
    assert [item["id"] for item in section(result, "turns")["items"]] == [
        "0", "1", "2", "3", "4", "5",
    ]  # fmt: skip
    assert section(result, "summary")["items"] == []
    assert not [d for d in result["dropped"] if d["section"] == "turns"]


@pytest.mark.django_db
def test_a_tight_budget_drops_whole_items_with_reasons(conversation: Tenant) -> None:
    result = ask(
        conversation, strategy="buffer", max_context_tokens=1200, reserve_tokens=1024
    ).json()
    assert result["budget_tokens"] == 176
    assert result["total_tokens"] <= 176
    assert result["dropped"]
    assert {d["reason"] for d in result["dropped"]} == {"budget"}


@pytest.mark.django_db
def test_served_memories_are_written_to_the_recall_log(conversation: Tenant) -> None:
    result = ask(conversation).json()
    log = RecallLog.objects.get(pk=result["recall_id"])
    assert log.purpose == "context"
    served = {
        item["id"]
        for s in result["sections"]
        for item in s["items"]
        if s["name"] in ("memories", "shared", "procedural")
    }
    assert {str(i) for i in log.memory_ids} == served


@pytest.mark.django_db
def test_an_unknown_model_is_a_400_listing_the_known_ones(conversation: Tenant) -> None:
    response = ask(conversation, model="gpt-9")
    assert response.status_code == 400
    known = response.json()["error"]["details"]["model"][0]
    assert "gpt-4o" in known
    assert "claude-sonnet-4" in known


@pytest.mark.django_db
def test_a_budget_too_small_for_the_prompt_and_query_is_a_422_with_the_numbers(
    conversation: Tenant,
) -> None:
    response = ask(conversation, max_context_tokens=1030, reserve_tokens=1024)
    assert response.status_code == 422
    numbers = response.json()["error"]["details"]["budget"]
    assert numbers["budget_tokens"] == 6
    assert numbers["required_tokens"] > 6


@pytest.mark.django_db
def test_anthropic_counts_are_labelled_estimates(conversation: Tenant) -> None:
    result = ask(conversation, model="claude-sonnet-4").json()
    assert result["exact"] is False
    assert result["tokenizer"] == "estimate:anthropic"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"query": ""}, "query"),
        ({"strategy": "all"}, "strategy"),
        ({"reserve_tokens": -1}, "reserve_tokens"),
        ({"surprise": 1}, "surprise"),
        ({"sections": {"nope": {}}}, "sections"),
    ],
)
def test_bad_requests_name_the_field(conversation: Tenant, fields: dict, field: str) -> None:
    response = ask(conversation, **fields)
    assert response.status_code == 400
    assert field in response.json()["error"]["details"]


@pytest.mark.django_db
def test_context_is_scoped_and_needs_the_context_permission(
    conversation: Tenant, globex: Tenant
) -> None:
    own = ask(globex)  # its own namespace, the same subject and session names
    assert own.status_code == 200
    assert [m["role"] for m in own.json()["messages"]] == ["system", "user"]
    assert "travel desk" not in own.json()["messages"][0]["content"]
    foreign = globex.client.post(conversation.url("context"), {"query": "x"}, format="json")
    assert foreign.status_code == 404
    reader = api_client(make_api_key([conversation.namespace], ["memories:read"]))
    assert (
        reader.post(conversation.url("context"), {"query": "x"}, format="json").status_code == 403
    )


@pytest.mark.django_db
def test_memory_token_counts_are_kept_from_write_time_and_used(conversation: Tenant) -> None:
    from apps.memories.row_encryption import KeyCache, open_memory
    from apps.tokens.tokenizers import count_tokens

    memory = Memory.objects.get(kind="procedural")
    text = open_memory(KeyCache(), memory)
    assert memory.prompt_tokens == {
        name: count_tokens(f"- {text}", name) for name in ("o200k_base", "cl100k_base")
    }
    result = ask(conversation, strategy="buffer").json()
    (item,) = section(result, "procedural")["items"]
    assert item["tokens"] == memory.prompt_tokens["o200k_base"] + 1
    assert result["total_tokens"] == message_tokens(result["messages"], tokenizer_for("o200k_base"))


@pytest.mark.django_db
def test_instructions_beyond_the_limit_are_reported_dropped(
    conversation: Tenant, monkeypatch
) -> None:
    from apps.context import services

    monkeypatch.setattr(services, "MAX_PROCEDURAL", 1)
    weaker = memory_create(
        actor=ACTOR,
        namespace=conversation.namespace,
        item=NewMemory(
            subject_external_id=None,
            content="Never share phone numbers.",
            kind="procedural",
            importance=0.2,
        ),
    )

    stronger = Memory.objects.get(kind="procedural", importance=0.9)
    result = ask(conversation).json()
    assert [i["id"] for i in section(result, "procedural")["items"]] == [str(stronger.id)]
    limited = [d for d in result["dropped"] if d["reason"] == "limit"]
    assert [(d["section"], d["id"]) for d in limited] == [("procedural", str(weaker.id))]
    assert limited[0]["tokens"] > 0


@pytest.mark.django_db
def test_summary_buffer_summarises_at_most_the_newest_older_turns_per_request(
    conversation: Tenant, monkeypatch
) -> None:
    from apps.context import services

    monkeypatch.setattr(services, "SUMMARY_NOW_TURNS", 2)
    result = ask(conversation, strategy="summary_buffer", buffer_tokens=40).json()
    older = {d["id"]: d["reason"] for d in result["dropped"] if d["section"] == "turns"}
    newest_two = sorted(older, key=int)[-2:]
    assert {older[key] for key in newest_two} == {"summarized"}
    assert {reason for key, reason in older.items() if key not in newest_two} == {"section_cap"}
