"""The async client against the live server, and its likeness to the sync one."""

from __future__ import annotations

import asyncio
import inspect

import memoryhub_client
import pytest
from memoryhub_client import AsyncMemoryHub, NotFound, PermissionDenied

from tests.conftest import Tenant, make_api_key

PAIRS = [
    (memoryhub_client.MemoryHub, memoryhub_client.AsyncMemoryHub),
    (memoryhub_client.Namespace, memoryhub_client.AsyncNamespace),
    (memoryhub_client.Memories, memoryhub_client.AsyncMemories),
    (memoryhub_client.Subjects, memoryhub_client.AsyncSubjects),
]


def test_it_creates_lists_and_recalls_asynchronously(server_url: str, acme: Tenant) -> None:
    async def scenario() -> None:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            ns = hub.namespace(acme.slug)
            made = [
                await ns.memories.create(f"Likes tea number {i}", subject="u1") for i in range(3)
            ]
            listed = [memory.id async for memory in ns.memories.list(subject="u1", page_size=2)]
            assert sorted(listed) == sorted(memory.id for memory in made)
            assert await ns.memories.get(made[0].id) == made[0]
            answer = await ns.recall("tea", subject="u1")
            assert {hit.memory.id for hit in answer.results} == set(listed)
            await ns.memories.delete(made[0].id)
            with pytest.raises(NotFound):
                await ns.memories.get(made[0].id)

    asyncio.run(scenario())


def test_it_sends_messages_asynchronously(server_url: str, acme: Tenant) -> None:
    async def scenario() -> None:
        async with AsyncMemoryHub(server_url, acme.raw_key) as hub:
            ns = hub.namespace(acme.slug)
            job = await ns.messages(
                subject="u1",
                session="s1",
                messages=[{"role": "user", "content": "I live in Oslo."}],
            )
            assert job.status == "succeeded"
            assert await hub.job(job.id) == job
            export = await ns.subjects.export("u1")
            assert "The user lives in Oslo." in {m["content"] for m in export["memories"]}

    asyncio.run(scenario())


def test_it_raises_typed_errors_asynchronously(server_url: str, acme: Tenant) -> None:
    raw = make_api_key([acme.namespace], ["memories:read"], name="acme reader")

    async def scenario() -> None:
        async with AsyncMemoryHub(server_url, raw) as hub:
            with pytest.raises(PermissionDenied):
                await hub.namespace(acme.slug).subjects.erase("u1")

    asyncio.run(scenario())


@pytest.mark.parametrize(("sync", "async_"), PAIRS, ids=lambda cls: cls.__name__)
def test_it_offers_the_same_calls_sync_and_async(sync: type, async_: type) -> None:
    def calls(cls: type) -> dict[str, list[tuple[str, object, object]]]:
        return {
            name: [
                (p.name, p.kind, p.default) for p in inspect.signature(member).parameters.values()
            ]
            for name, member in vars(cls).items()
            if callable(member) and not name.startswith("_")
        }

    assert calls(sync) == calls(async_)
