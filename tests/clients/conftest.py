"""The SDK against a live MemoryHub: the server runs in a thread (pytest-django's
`live_server`), so the cast is committed (`transactional_db`) for it to see."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from memoryhub_client import MemoryHub, Namespace

from tests.conftest import Tenant, make_api_key


@pytest.fixture
def server_url(live_server, transactional_db: None) -> str:
    return str(live_server.url)


@pytest.fixture
def hub(server_url: str, acme: Tenant) -> Iterator[MemoryHub]:
    """acme's app, with its full-permission key."""
    with MemoryHub(server_url, acme.raw_key) as client:
        yield client


@pytest.fixture
def ns(hub: MemoryHub, acme: Tenant) -> Namespace:
    return hub.namespace(acme.slug)


@pytest.fixture
def globex_ns(server_url: str, globex: Tenant) -> Iterator[Namespace]:
    """globex's app: the outsider, who must see nothing of acme's."""
    with MemoryHub(server_url, globex.raw_key) as client:
        yield client.namespace(globex.slug)


@pytest.fixture
def reader_ns(server_url: str, acme: Tenant) -> Iterator[Namespace]:
    """acme's namespace through a key that may only read memories."""
    raw = make_api_key([acme.namespace], ["memories:read"], name="acme reader")
    with MemoryHub(server_url, raw) as client:
        yield client.namespace(acme.slug)
