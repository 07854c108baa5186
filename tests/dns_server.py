"""A real DNS server on loopback (dnslib, in a thread) whose answers a test changes: the
resolver MEMORYHUB_WEBHOOK_DNS_RESOLVER points at, for the webhook destination tests."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dnslib import AAAA, QTYPE, RCODE, RR, A, DNSRecord
from dnslib.server import DNSLogger, DNSServer


class ChangingResolver:
    """dnslib's resolver interface: answers each name with the addresses set for it now
    (none set: NXDOMAIN), and counts the questions."""

    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.questions = 0

    def point(self, name: str, *addresses: str) -> None:
        self.records[name.rstrip(".").lower()] = list(addresses)

    def resolve(self, request: DNSRecord, handler: Any) -> DNSRecord:
        self.questions += 1
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        if name not in self.records:
            reply.header.rcode = RCODE.NXDOMAIN
            return reply
        for text in self.records[name]:
            version = ipaddress.ip_address(text).version
            if request.q.qtype == QTYPE.A and version == 4:
                reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A(text), ttl=0))
            elif request.q.qtype == QTYPE.AAAA and version == 6:
                record = AAAA(ipaddress.ip_address(text).exploded)  # dnslib reads no "::a.b.c.d"
                reply.add_answer(RR(request.q.qname, QTYPE.AAAA, rdata=record, ttl=0))
        return reply


@contextmanager
def dns_server(settings: Any) -> Iterator[ChangingResolver]:
    """The server, running, with `settings` pointed at it (and no host allowed)."""
    resolver = ChangingResolver()
    quiet = DNSLogger(log="-request,-reply,-truncated,-error,-recv,-send,-data", prefix=False)
    server = DNSServer(resolver, address="127.0.0.1", port=0, logger=quiet)
    # A short poll: stopping the server after each test then takes no half second.
    thread = threading.Thread(
        target=server.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    settings.MEMORYHUB_WEBHOOK_DNS_RESOLVER = f"127.0.0.1:{server.server.server_address[1]}"
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = []
    try:
        yield resolver
    finally:
        server.stop()
        server.server.server_close()
