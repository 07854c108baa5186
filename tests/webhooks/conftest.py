"""The webhooks' cast: a real HTTP receiver on loopback (a ThreadingHTTPServer in a thread)
that records what arrives and answers as told (a status, a delay, or holding the request),
and settings that let the tests reach it (MEMORYHUB_WEBHOOK_ALLOWED_HOSTS lists 127.0.0.1)
and retry at once. Delivery is driven by `deliver_due()`: the dispatcher thread is off."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from standardwebhooks import Webhook

from apps.audit.actors import Actor
from apps.webhooks import services
from apps.webhooks.catalog import EVENT_TYPES
from apps.webhooks.models import WebhookEndpoint
from tests.conftest import Tenant


@dataclass
class Arrival:
    headers: dict[str, str]
    body: bytes

    @property
    def payload(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Answers `status` after `delay` seconds; while `hold` is clear, requests wait on it."""

    status: int = 200
    delay: float = 0.0
    arrivals: list[Arrival] = field(default_factory=list)
    started: list[Arrival] = field(default_factory=list)  # before the hold: read, not answered
    hold: threading.Event = field(default_factory=threading.Event)
    server: ThreadingHTTPServer | None = None
    port: int = 0

    def __post_init__(self) -> None:
        self.hold.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.started.append(Arrival(dict(self.headers.items()), body))
                receiver.hold.wait(30)
                time.sleep(receiver.delay)
                receiver.arrivals.append(Arrival(dict(self.headers.items()), body))
                self.send_response(receiver.status)
                self.send_header("content-type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok " * 10)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def verified(self, secret: str) -> list[dict[str, Any]]:
        """Every arrival's payload, each signature checked with `secret` (raises if not)."""
        return [Webhook(secret).verify(a.body, a.headers) for a in self.arrivals]

    def types(self) -> list[str]:
        return [a.payload["type"] for a in self.arrivals]


@pytest.fixture
def webhook_settings(settings: Any) -> Any:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_WEBHOOK_DNS_RESOLVER = None
    settings.MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS = 2.0
    settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = [0.0, 0.0, 0.0]
    settings.MEMORYHUB_WEBHOOK_DISPATCHER = False
    return settings


@pytest.fixture
def receiver(webhook_settings: Any) -> Iterator[Receiver]:
    found = Receiver()
    found.start()
    yield found
    found.hold.set()
    found.stop()


@dataclass
class Hook:
    endpoint: WebhookEndpoint
    secret: str


def hook_for(
    tenant: Tenant,
    url: str,
    events: list[str] | None = None,
    *,
    include_content: bool = False,
    creator_reads_memories: bool = True,
) -> Hook:
    created = services.endpoint_create(
        actor=Actor.system("tests"),
        namespace=tenant.namespace,
        item=services.NewEndpoint(
            url=url, events=list(events or EVENT_TYPES), include_content=include_content
        ),
        created_by="tests",
        creator_reads_memories=creator_reads_memories,
    )
    return Hook(created.endpoint, created.secret)
