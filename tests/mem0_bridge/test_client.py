"""Mem0's real client (`mem0ai` 2.2.1, sync and async) against MemoryHub's Mem0-compatible
API on a live server (a thread: pytest-django's live_server), through every call it makes.
acme's app owns the memories; globex's key must see none of them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from mem0 import AsyncMemoryClient, MemoryClient
from mem0.exceptions import AuthenticationError, MemoryNotFoundError, ValidationError

from apps.audit.models import AuditEvent
from apps.memories.models import Memory, Subject
from apps.recall.models import RecallLog
from tests.conftest import Tenant, make_api_key


@pytest.fixture
def server_url(live_server, transactional_db: None) -> str:
    return str(live_server.url)


@pytest.fixture
def mem0(server_url: str, acme: Tenant) -> Iterator[MemoryClient]:
    client = MemoryClient(api_key=acme.raw_key, host=f"{server_url}/mem0")
    yield client
    client.client.close()


def _stored(client: MemoryClient, user: str = "alice", **extra: object) -> list[dict]:
    answer = client.add(
        [
            {"role": "user", "content": "I am allergic to peanuts."},
            {"role": "assistant", "content": "Noted: no peanuts."},
        ],
        user_id=user,
        infer=False,
        **extra,
    )
    return answer["results"]


def test_it_passes_the_client_s_start_up_check(mem0: MemoryClient) -> None:
    assert mem0.org_id == "acme"
    assert mem0.project_id == "acme"


def test_a_key_of_several_namespaces_is_told_to_name_one(
    server_url: str, acme: Tenant, globex: Tenant
) -> None:
    raw = make_api_key([acme.namespace, globex.namespace], ["memories:read"], name="both")
    with pytest.raises(ValueError, match="/mem0/<namespace>"):
        MemoryClient(api_key=raw, host=f"{server_url}/mem0")
    client = MemoryClient(api_key=raw, host=f"{server_url}/mem0/globex")
    assert client.project_id == "globex"


def test_a_wrong_key_is_refused_at_start_up(server_url: str, db: None) -> None:
    with pytest.raises(ValueError, match="Invalid, revoked or expired"):
        MemoryClient(api_key="mh_000000000000_nope", host=f"{server_url}/mem0")


def test_add_without_inference_stores_each_message_as_a_memory(mem0: MemoryClient) -> None:
    results = _stored(mem0, agent_id="helper", run_id="chat-1", metadata={"topic": "food"})
    assert [(r["event"], r["memory"]) for r in results] == [
        ("ADD", "I am allergic to peanuts."),
        ("ADD", "Noted: no peanuts."),
    ]
    got = mem0.get(results[0]["id"])
    assert got["memory"] == "I am allergic to peanuts."
    assert (got["user_id"], got["agent_id"], got["run_id"]) == ("alice", "helper", "chat-1")
    assert got["metadata"] == {"topic": "food"}
    memory = Memory.objects.get(pk=results[0]["id"])
    assert memory.session_key == "chat-1"
    assert memory.metadata == {"topic": "food", "agent_id": "helper", "run_id": "chat-1"}
    assert AuditEvent.objects.filter(action="memory.create_bulk").count() == 1


def test_add_with_inference_answers_with_the_turns_and_extracts_facts(
    mem0: MemoryClient,
) -> None:
    answer = mem0.add(
        [{"role": "user", "content": "I live in Lisbon and I am allergic to peanuts."}],
        user_id="alice",
    )
    (turn,) = answer["results"]
    assert turn["event"] == "ADD"
    assert turn["memory"] == "I live in Lisbon and I am allergic to peanuts."
    listed = mem0.get_all(filters={"user_id": "alice"})
    assert listed["count"] >= 1
    assert any("peanut" in m["memory"].lower() for m in listed["results"])
    assert AuditEvent.objects.filter(action="messages.ingest").count() == 1


def test_search_is_a_recall_filtered_by_user_agent_and_run(mem0: MemoryClient) -> None:
    _stored(mem0, agent_id="helper", run_id="chat-1")
    _stored(mem0, user="bob", agent_id="other", run_id="chat-2")
    found = mem0.search("peanuts", filters={"user_id": "alice"}, top_k=5)["results"]
    assert found
    assert {r["user_id"] for r in found} == {"alice"}
    assert all("score" in r for r in found)
    by_agent = mem0.search("peanuts", filters={"AND": [{"user_id": "bob"}, {"agent_id": "other"}]})
    assert {r["agent_id"] for r in by_agent["results"]} == {"other"}
    by_run = mem0.search("peanuts", filters={"user_id": "alice", "run_id": "chat-2"})
    assert by_run["results"] == []
    assert RecallLog.objects.count() == 3


def test_get_all_pages_through_a_user_s_memories(mem0: MemoryClient) -> None:
    _stored(mem0)
    _stored(mem0, user="bob")
    first = mem0.get_all(filters={"user_id": "alice"}, page=1, page_size=1)
    assert first["count"] == 2
    assert first["next"]
    assert first["previous"] is None
    second = mem0.get_all(filters={"user_id": "alice"}, page=2, page_size=1)
    assert second["next"] is None
    assert {first["results"][0]["id"], second["results"][0]["id"]} == {
        str(m.pk) for m in Memory.objects.filter(subject__external_id="alice")
    }


def test_update_makes_a_version_that_history_shows(mem0: MemoryClient) -> None:
    memory_id = _stored(mem0)[0]["id"]
    updated = mem0.update(memory_id, text="I am allergic to peanuts and cashews.")
    assert updated["memory"] == "I am allergic to peanuts and cashews."
    history = mem0.history(memory_id)
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, "I am allergic to peanuts."),
        ("UPDATE", "I am allergic to peanuts.", "I am allergic to peanuts and cashews."),
    ]


def test_delete_removes_one_memory(mem0: MemoryClient) -> None:
    memory_id = _stored(mem0)[0]["id"]
    assert mem0.delete(memory_id) == {"message": "Memory deleted successfully!"}
    with pytest.raises(MemoryNotFoundError):
        mem0.get(memory_id)
    assert AuditEvent.objects.filter(action="memory.delete").count() == 1


def test_delete_all_for_a_user_is_an_erasure_with_its_receipt(mem0: MemoryClient) -> None:
    _stored(mem0)
    _stored(mem0, user="bob")
    answer = mem0.delete_all(user_id="alice")
    assert answer["receipt"]["memories_deleted"] == 2
    assert not Subject.objects.filter(external_id="alice").exists()
    assert Memory.objects.filter(subject__external_id="bob").count() == 2
    assert AuditEvent.objects.filter(action="subject.erase").count() == 1


def test_delete_all_needs_subjects_admin(server_url: str, acme: Tenant) -> None:
    raw = make_api_key([acme.namespace], ["memories:read", "memories:write"], name="writer")
    client = MemoryClient(api_key=raw, host=f"{server_url}/mem0")
    _stored(client)
    with pytest.raises(AuthenticationError, match="subjects:admin"):
        client.delete_all(user_id="alice")


def test_delete_all_by_agent_reads_the_filters_repr(mem0: MemoryClient) -> None:
    _stored(mem0, agent_id="helper")
    _stored(mem0, agent_id="other")
    answer = mem0.delete_all(filters={"user_id": "alice", "agent_id": "helper"})
    assert answer["deleted"] == 2
    assert {m.metadata["agent_id"] for m in Memory.objects.all()} == {"other"}


def test_users_lists_the_subjects(mem0: MemoryClient) -> None:
    _stored(mem0)
    _stored(mem0, user="bob")
    users = mem0.users()
    assert {(u["name"], u["type"], u["total_memories"]) for u in users["results"]} == {
        ("alice", "user", 2),
        ("bob", "user", 2),
    }


def test_an_unsupported_filter_is_refused_in_mem0_s_shape(mem0: MemoryClient) -> None:
    with pytest.raises(ValidationError, match="OR"):
        mem0.search("peanuts", filters={"OR": [{"user_id": "a"}, {"user_id": "b"}]})


def test_a_key_of_another_namespace_sees_nothing(
    mem0: MemoryClient, server_url: str, globex: Tenant
) -> None:
    memory_id = _stored(mem0)[0]["id"]
    outsider = MemoryClient(api_key=globex.raw_key, host=f"{server_url}/mem0")
    with pytest.raises(MemoryNotFoundError):
        outsider.get(memory_id)
    with pytest.raises(MemoryNotFoundError):
        outsider.history(memory_id)
    with pytest.raises(MemoryNotFoundError):
        outsider.update(memory_id, text="mine now")
    with pytest.raises(MemoryNotFoundError):
        outsider.delete(memory_id)
    assert outsider.get_all(filters={"user_id": "alice"})["count"] == 0
    assert outsider.search("peanuts", filters={"user_id": "alice"})["results"] == []
    assert outsider.users()["results"] == []
    with pytest.raises(MemoryNotFoundError):
        outsider.delete_all(user_id="alice")
    with pytest.raises(ValueError, match="Namespace not found"):
        MemoryClient(api_key=globex.raw_key, host=f"{server_url}/mem0/acme")
    assert Memory.objects.filter(pk=memory_id).exists()


def test_a_read_only_key_cannot_add(server_url: str, acme: Tenant) -> None:
    raw = make_api_key([acme.namespace], ["memories:read"], name="reader")
    reader = MemoryClient(api_key=raw, host=f"{server_url}/mem0")
    with pytest.raises(AuthenticationError, match="memories:write"):
        reader.add("I like tea.", user_id="alice", infer=False)
    assert not Memory.objects.exists()
    denied = AuditEvent.objects.get(outcome="denied", action="api.AddView.post")
    assert denied.details["reason"] == "missing_permission:memories:write"


def test_the_async_client_makes_every_call(server_url: str, acme: Tenant) -> None:
    async def calls() -> dict[str, object]:
        client = AsyncMemoryClient(api_key=acme.raw_key, host=f"{server_url}/mem0/acme")
        added = await client.add("I am allergic to peanuts.", user_id="alice", infer=False)
        memory_id = added["results"][0]["id"]
        seen = {
            "get": (await client.get(memory_id))["memory"],
            "search": len(
                (await client.search("peanuts", filters={"user_id": "alice"}))["results"]
            ),
            "get_all": (await client.get_all(filters={"user_id": "alice"}))["count"],
            "update": (await client.update(memory_id, text="I am allergic to cashews."))["memory"],
            "history": len(await client.history(memory_id)),
            "users": len((await client.users())["results"]),
            "delete": (await client.delete(memory_id))["message"],
        }
        await client.add("I drink tea.", user_id="alice", infer=False)
        seen["delete_all"] = (await client.delete_all(user_id="alice"))["receipt"][
            "memories_deleted"
        ]
        await client.async_client.aclose()
        return seen

    assert asyncio.run(calls()) == {
        "get": "I am allergic to peanuts.",
        "search": 1,
        "get_all": 1,
        "update": "I am allergic to cashews.",
        "history": 2,
        "users": 1,
        "delete": "Memory deleted successfully!",
        "delete_all": 1,
    }


def test_a_call_memoryhub_does_not_serve_says_so(mem0: MemoryClient) -> None:
    with pytest.raises(MemoryNotFoundError, match="not this call"):
        mem0.batch_update([{"memory_id": "x", "text": "y"}])


def test_errors_keep_memoryhub_s_shape_beside_mem0_s_detail(mem0: MemoryClient) -> None:
    response = mem0.client.post("/v3/memories/search/", json={"query": ""})
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "query must be a non-empty string."
    assert body["error"]["code"] == "not_supported"
