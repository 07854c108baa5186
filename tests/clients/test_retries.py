"""When the SDK sends a call again, and when it does not: 429 and 503 answered by a stand-in
server (respx), as the live server will not answer them on demand."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import respx
from memoryhub_client import (
    AsyncMemoryHub,
    JobFailed,
    MemoryHub,
    RateLimited,
    RetryPolicy,
    ServerError,
    ServiceUnavailable,
    sync_client,
)

BASE = "http://memoryhub.test"
MEMORY_PATH = "/api/v1/namespaces/acme/memories/m1"
FAST = RetryPolicy(attempts=3, backoff=0.01, max_backoff=0.02)
STAMP = "2026-03-01T09:30:00Z"
MEMORY: dict[str, Any] = {
    "id": "m1",
    "subject": "u1",
    "content": "Likes tea",
    "kind": "semantic",
    "tags": [],
    "metadata": {},
    "importance": 0.5,
    "confidence": 1,
    "source": {},
    "status": "active",
    "version": 1,
    "occurred_at": None,
    "created_at": STAMP,
    "updated_at": STAMP,
    "valid_from": STAMP,
    "valid_to": None,
    "expires_at": None,
}


def job(status: str) -> dict[str, Any]:
    return {
        "id": "j1",
        "namespace": "acme",
        "subject": "u1",
        "kind": "ingest",
        "status": status,
        "result": None,
        "error": "extraction broke" if status == "failed" else "",
        "attempts": 1,
        "created_at": STAMP,
        "updated_at": STAMP,
        "url": "/api/v1/jobs/j1",
    }


def error(status: int, code: str, **headers: str) -> httpx.Response:
    body = {"error": {"code": code, "message": code, "details": {}}}
    return httpx.Response(status, json=body, headers=headers)


@pytest.fixture
def server():
    with respx.mock(base_url=BASE, assert_all_called=False) as mock:
        yield mock


@pytest.fixture
def hub():
    with MemoryHub(BASE, "mh_test_key", retries=FAST) as client:
        yield client


def test_it_waits_for_retry_after_then_sends_again(server, hub, monkeypatch) -> None:
    route = server.get(MEMORY_PATH).mock(
        side_effect=[
            error(429, "throttled", **{"Retry-After": "1"}),
            httpx.Response(200, json=MEMORY),
        ]
    )
    waits: list[float] = []  # the waits asked for, not the clock's reading
    monkeypatch.setattr(sync_client.time, "sleep", waits.append)
    memory = hub.namespace("acme").memories.get("m1")
    assert memory.content == "Likes tea"
    assert route.call_count == 2
    assert waits == [1.0]


def test_it_sends_a_throttled_write_again(server, hub) -> None:
    """A 429 is refused before anything is done, so even a plain POST is safe to repeat."""
    route = server.post("/api/v1/namespaces/acme/memories").mock(
        side_effect=[
            error(429, "throttled", **{"Retry-After": "0"}),
            httpx.Response(201, json=MEMORY),
        ]
    )
    assert hub.namespace("acme").memories.create("Likes tea", subject="u1").id == "m1"
    assert route.call_count == 2


def test_it_retries_an_idempotent_get_after_503(server, hub) -> None:
    route = server.get(MEMORY_PATH).mock(
        side_effect=[
            error(503, "unavailable"),
            error(503, "unavailable"),
            httpx.Response(200, json=MEMORY),
        ]
    )
    assert hub.namespace("acme").memories.get("m1").id == "m1"
    assert route.call_count == 3


def test_it_gives_up_after_its_attempts(server, hub) -> None:
    route = server.get(MEMORY_PATH).mock(return_value=error(503, "unavailable"))
    with pytest.raises(ServiceUnavailable) as raised:
        hub.namespace("acme").memories.get("m1")
    assert route.call_count == FAST.attempts
    assert raised.value.code == "unavailable"


def test_it_does_not_retry_a_post_without_idempotency(server, hub) -> None:
    route = server.post("/api/v1/namespaces/acme/memories").mock(
        side_effect=[error(503, "unavailable"), httpx.Response(201, json=MEMORY)]
    )
    with pytest.raises(ServiceUnavailable):
        hub.namespace("acme").memories.create("Likes tea", subject="u1")
    assert route.call_count == 1


def test_it_does_not_wait_a_retry_after_beyond_its_policy(server) -> None:
    route = server.get(MEMORY_PATH).mock(
        return_value=error(429, "throttled", **{"Retry-After": "3600"})
    )
    with MemoryHub(BASE, "mh_test_key") as hub, pytest.raises(RateLimited) as raised:
        hub.namespace("acme").memories.get("m1")
    assert raised.value.retry_after == 3600
    assert route.call_count == 1


def test_it_retries_a_get_after_a_lost_connection(server, hub) -> None:
    route = server.get(MEMORY_PATH).mock(
        side_effect=[httpx.ConnectError("refused"), httpx.Response(200, json=MEMORY)]
    )
    assert hub.namespace("acme").memories.get("m1").id == "m1"
    assert route.call_count == 2


def test_it_sends_messages_with_an_idempotency_key_kept_across_retries(server, hub) -> None:
    route = server.post("/api/v1/namespaces/acme/messages").mock(
        side_effect=[error(503, "unavailable"), httpx.Response(201, json=job("succeeded"))]
    )
    turns = [{"role": "user", "content": "Hi"}]
    hub.namespace("acme").messages(subject="u1", session="s1", messages=turns)
    keys = [call.request.headers.get("Idempotency-Key") for call in route.calls]
    assert len(keys) == 2
    assert keys[0]
    assert keys[0] == keys[1]


def test_it_sends_a_new_idempotency_key_for_each_messages_call(server, hub) -> None:
    route = server.post("/api/v1/namespaces/acme/messages").mock(
        return_value=httpx.Response(201, json=job("succeeded"))
    )
    turns = [{"role": "user", "content": "Hi"}]
    hub.namespace("acme").messages(subject="u1", session="s1", messages=turns)
    hub.namespace("acme").messages(subject="u1", session="s1", messages=turns)
    first, second = (call.request.headers["Idempotency-Key"] for call in route.calls)
    assert first != second


def test_it_waits_for_a_queued_job(server, hub) -> None:
    server.post("/api/v1/namespaces/acme/messages").mock(
        return_value=httpx.Response(202, json=job("queued"))
    )
    polled = server.get("/api/v1/jobs/j1").mock(
        side_effect=[
            httpx.Response(200, json=job("running")),
            httpx.Response(200, json=job("succeeded")),
        ]
    )
    turns = [{"role": "user", "content": "Hi"}]
    ns = hub.namespace("acme")
    assert ns.messages(subject="u1", session="s1", messages=turns, wait=False).status == "queued"
    assert polled.call_count == 0
    finished = ns.messages(subject="u1", session="s1", messages=turns)
    assert finished.status == "succeeded"
    assert polled.call_count == 2


def test_it_raises_job_failed_for_a_failed_job(server, hub) -> None:
    server.post("/api/v1/namespaces/acme/messages").mock(
        return_value=httpx.Response(202, json=job("queued"))
    )
    server.get("/api/v1/jobs/j1").mock(return_value=httpx.Response(200, json=job("failed")))
    with pytest.raises(JobFailed) as raised:
        hub.namespace("acme").messages(
            subject="u1", session="s1", messages=[{"role": "user", "content": "Hi"}]
        )
    assert raised.value.job.error == "extraction broke"


def test_it_raises_a_server_error_for_a_page_not_in_the_error_shape(server, hub) -> None:
    server.post("/api/v1/namespaces/acme/memories").mock(
        return_value=httpx.Response(502, text="<html>Bad gateway</html>")
    )
    with pytest.raises(ServerError) as raised:
        hub.namespace("acme").memories.create("Likes tea")
    assert (raised.value.status_code, raised.value.code) == (502, "http_502")


def test_it_retries_asynchronously_too(server) -> None:
    route = server.get(MEMORY_PATH).mock(
        side_effect=[error(503, "unavailable"), httpx.Response(200, json=MEMORY)]
    )

    async def scenario() -> str:
        async with AsyncMemoryHub(BASE, "mh_test_key", retries=FAST) as hub:
            return (await hub.namespace("acme").memories.get("m1")).id

    assert asyncio.run(scenario()) == "m1"
    assert route.call_count == 2
