"""Outbound calls to webhook URLs (memoryhub/safe_http.py) against a real DNS server and real
HTTP(S) servers on loopback, each in a thread: the DNS server's answer changes between calls
(rebinding), MEMORYHUB_WEBHOOK_DNS_RESOLVER points at it, and MEMORYHUB_WEBHOOK_ALLOWED_HOSTS
lets the calls reach the loopback receiver."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from memoryhub import safe_http
from memoryhub.safe_http import Answer, DeliveryFailed, UnsafeDestination
from tests.dns_server import ChangingResolver, dns_server

PUBLIC = "93.184.215.14"


# --- A DNS server whose answers a test changes -----------------------------------------------


@pytest.fixture
def dns(settings: Any) -> Iterator[ChangingResolver]:
    with dns_server(settings) as resolver:
        yield resolver


# --- A receiver ------------------------------------------------------------------------------


@dataclass
class Receiver:
    """An HTTP server on 127.0.0.1 that records each POST and answers as `behaviour` says:
    "ok" (200, `answer`), "redirect" (302), "slow" (sleeps `delay` first), "stream" (a body
    that never ends)."""

    behaviour: str = "ok"
    answer: bytes = b'{"received": true}'
    delay: float = 0.0
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)
    server_names: list[str | None] = field(default_factory=list)
    port: int = 0

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append((self.path, dict(self.headers), body))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    receiver.respond(self)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def respond(self, handler: BaseHTTPRequestHandler) -> None:
        if self.behaviour == "slow":
            time.sleep(self.delay)
        if self.behaviour == "redirect":
            handler.send_response(302)
            handler.send_header("Location", "/elsewhere")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if self.behaviour == "stream":
            handler.send_response(200)
            handler.end_headers()  # no length: the body ends when the connection does
            for _ in range(100_000):  # 400 MB at most, should the client never stop
                handler.wfile.write(b"x" * 4096)
            return
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(self.answer)))
        handler.end_headers()
        handler.wfile.write(self.answer)


@contextlib.contextmanager
def serving(receiver: Receiver, tls: ssl.SSLContext | None = None) -> Iterator[Receiver]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), receiver.handler())
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    receiver.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving(Receiver()) as running:
        yield running


def send(url: str, **kwargs: Any) -> Answer:
    return safe_http.post(
        url, body=b'{"type": "test"}', headers={"Content-Type": "application/json"}, **kwargs
    )


# --- Checking a destination ------------------------------------------------------------------


def test_it_passes_a_name_that_resolves_to_a_public_address(dns: ChangingResolver) -> None:
    dns.point("hooks.example", PUBLIC, "2606:4700::1111")
    assert safe_http.check_destination("https://hooks.example/in") == [
        ipaddress.ip_address(PUBLIC),
        ipaddress.ip_address("2606:4700::1111"),
    ]
    assert dns.questions == 2  # A and AAAA, from the configured server


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.5",
        "172.16.3.4",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.1.1",
        "100.100.100.200",
        "168.63.129.16",
        "0.0.0.0",  # noqa: S104 (an address refused, not one bound to)
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "fd00::1",
        "fe80::1",
        "fd00:ec2::254",
        "::ffff:10.0.0.5",
        "::ffff:169.254.169.254",
        "2002:7f00:1::1",
        "64:ff9b::a00:5",
    ],
)
def test_it_refuses_a_name_that_resolves_to_an_address_that_is_not_public(
    dns: ChangingResolver, address: str
) -> None:
    dns.point("hooks.example", address)
    with pytest.raises(UnsafeDestination) as refused:
        safe_http.check_destination("https://hooks.example/in")
    assert refused.value.reason == "private_address"


def test_it_refuses_a_name_when_any_one_of_its_addresses_is_private(
    dns: ChangingResolver,
) -> None:
    dns.point("hooks.example", PUBLIC, "10.0.0.5")
    with pytest.raises(UnsafeDestination) as refused:
        safe_http.check_destination("https://hooks.example/in")
    assert refused.value.reason == "private_address"


@pytest.mark.parametrize("url", ["https://127.0.0.1/in", "https://[::1]:8443/in"])
def test_it_refuses_a_private_address_written_in_the_url(dns: ChangingResolver, url: str) -> None:
    with pytest.raises(UnsafeDestination) as refused:
        safe_http.check_destination(url)
    assert refused.value.reason == "private_address"
    assert dns.questions == 0


def test_it_refuses_http_to_a_public_address(dns: ChangingResolver) -> None:
    dns.point("hooks.example", PUBLIC)
    with pytest.raises(UnsafeDestination) as refused:
        safe_http.check_destination("http://hooks.example/in")
    assert refused.value.reason == "not_https"


def test_it_allows_http_to_a_listed_host(dns: ChangingResolver, settings: Any) -> None:
    dns.point("hooks.example", PUBLIC)
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["hooks.example"]
    assert safe_http.check_destination("http://hooks.example/in") == [ipaddress.ip_address(PUBLIC)]


def test_it_says_when_a_name_does_not_resolve(dns: ChangingResolver) -> None:
    with pytest.raises(UnsafeDestination) as refused:
        safe_http.check_destination("https://nowhere.example/in")
    assert refused.value.reason == "unresolvable"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example/in",
        "https:///in",
        "hooks.example/in",
        "https://hooks.example:99999/in",
        "https://hooks.example:0/in",
        "https://user:secret@hooks.example/in",
    ],
)
def test_it_refuses_what_is_not_a_callable_url(dns: ChangingResolver, url: str) -> None:
    dns.point("hooks.example", PUBLIC)
    with pytest.raises(UnsafeDestination) as refused:
        safe_http.check_destination(url)
    assert refused.value.reason == "bad_url"


# --- Posting ---------------------------------------------------------------------------------


def test_it_refuses_at_post_a_name_rebound_to_a_private_address(
    dns: ChangingResolver, receiver: Receiver
) -> None:
    dns.point("hooks.example", PUBLIC)
    url = f"https://hooks.example:{receiver.port}/in"
    safe_http.check_destination(url)  # passes: a public address, at creation
    for private in ("127.0.0.1", "10.0.0.5", "169.254.169.254"):
        dns.point("hooks.example", private)
        with pytest.raises(UnsafeDestination) as refused:
            send(url)
        assert refused.value.reason == "private_address"
    assert receiver.requests == []


def test_it_posts_to_an_allowed_loopback_address(receiver: Receiver, settings: Any) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    answer = send(f"http://127.0.0.1:{receiver.port}/in?x=1")
    assert (answer.status, answer.body) == (200, b'{"received": true}')
    assert answer.elapsed_ms > 0
    [(path, headers, body)] = receiver.requests
    assert (path, body) == ("/in?x=1", b'{"type": "test"}')
    assert headers["Host"] == f"127.0.0.1:{receiver.port}"
    assert headers["Content-Type"] == "application/json"


def test_it_connects_to_the_checked_address_and_names_the_urls_host(
    dns: ChangingResolver, receiver: Receiver, settings: Any
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["hooks.test"]
    answer = send(f"http://hooks.test:{receiver.port}/in", timeout=2)
    assert answer.status == 200
    assert receiver.requests[0][1]["Host"] == f"hooks.test:{receiver.port}"


def test_a_listed_name_waives_the_rules_for_that_name_only(
    dns: ChangingResolver, receiver: Receiver, settings: Any
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    dns.point("other.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["hooks.test"]
    with pytest.raises(UnsafeDestination) as refused:
        send(f"https://other.test:{receiver.port}/in")
    assert refused.value.reason == "private_address"
    assert receiver.requests == []


def test_it_keeps_the_first_kibibyte_of_the_answer(receiver: Receiver, settings: Any) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    receiver.answer = bytes(range(256)) * 20
    answer = send(f"http://127.0.0.1:{receiver.port}/in")
    assert answer.body == receiver.answer[: safe_http.KEPT_BYTES]
    assert len(answer.body) == 1024


def test_it_stops_reading_an_answer_that_never_ends(receiver: Receiver, settings: Any) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    receiver.behaviour = "stream"
    started = time.monotonic()
    answer = send(f"http://127.0.0.1:{receiver.port}/in", timeout=3)
    assert (answer.status, answer.body) == (200, b"x" * 1024)
    assert time.monotonic() - started < 2


def test_it_does_not_follow_redirects(receiver: Receiver, settings: Any) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    receiver.behaviour = "redirect"
    answer = send(f"http://127.0.0.1:{receiver.port}/in")
    assert answer.status == 302
    assert [path for path, _, _ in receiver.requests] == ["/in"]


def test_it_gives_up_on_a_slow_receiver(receiver: Receiver, settings: Any) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    receiver.behaviour, receiver.delay = "slow", 1.5
    started = time.monotonic()
    with pytest.raises(DeliveryFailed) as failed:
        send(f"http://127.0.0.1:{receiver.port}/in", timeout=0.3)
    assert failed.value.reason == "timeout"
    assert time.monotonic() - started < 1.2


def test_its_timeout_defaults_to_the_setting(receiver: Receiver, settings: Any) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS = 0.3
    receiver.behaviour, receiver.delay = "slow", 1.5
    with pytest.raises(DeliveryFailed) as failed:
        send(f"http://127.0.0.1:{receiver.port}/in")
    assert failed.value.reason == "timeout"


def test_it_reports_a_refused_connection(settings: Any) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    with serving(Receiver()) as closed:
        port = closed.port
    with pytest.raises(DeliveryFailed) as failed:
        send(f"http://127.0.0.1:{port}/in", timeout=1)
    assert failed.value.reason == "connection"


# --- The forms of MEMORYHUB_WEBHOOK_ALLOWED_HOSTS --------------------------------------------


@pytest.mark.parametrize("network", ["127.0.0.0/8", "127.0.0.1/32"])
def test_a_listed_network_allows_the_names_that_resolve_into_it(
    dns: ChangingResolver, receiver: Receiver, settings: Any, network: str
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = [network]
    assert send(f"http://hooks.test:{receiver.port}/in").status == 200


def test_a_listed_network_allows_nothing_outside_it(
    dns: ChangingResolver, receiver: Receiver, settings: Any
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["10.0.0.0/8"]
    with pytest.raises(UnsafeDestination) as refused:
        send(f"https://hooks.test:{receiver.port}/in")
    assert refused.value.reason == "private_address"
    with pytest.raises(UnsafeDestination) as refused:
        send(f"http://hooks.test:{receiver.port}/in")
    assert refused.value.reason == "not_https"
    assert receiver.requests == []


@pytest.mark.parametrize("form", ["127.0.0.1:{port}", "127.0.0.0/8:{port}", "hooks.test:{port}"])
def test_a_listed_port_allows_that_port(
    dns: ChangingResolver, receiver: Receiver, settings: Any, form: str
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = [form.format(port=receiver.port)]
    host = "hooks.test" if form.startswith("hooks") else "127.0.0.1"
    assert send(f"http://{host}:{receiver.port}/in").status == 200


@pytest.mark.parametrize("form", ["127.0.0.1:{port}", "127.0.0.0/8:{port}", "hooks.test:{port}"])
def test_a_listed_port_allows_no_other_port(
    dns: ChangingResolver, receiver: Receiver, settings: Any, form: str
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = [form.format(port=receiver.port + 1)]
    host = "hooks.test" if form.startswith("hooks") else "127.0.0.1"
    with pytest.raises(UnsafeDestination):
        send(f"http://{host}:{receiver.port}/in")
    assert receiver.requests == []


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("hooks.example", ("hooks.example", None, None)),
        ("Hooks.Example.:8443", ("hooks.example", None, 8443)),
        ("10.0.0.0/8", (None, "10.0.0.0/8", None)),
        ("10.1.2.3:8080", (None, "10.1.2.3/32", 8080)),
        ("[fd00::/8]:443", (None, "fd00::/8", 443)),
        ("::1", (None, "::1/128", None)),
    ],
)
def test_it_reads_each_form_of_an_allowed_host(
    entry: str, expected: tuple[str | None, str | None, int | None]
) -> None:
    [rule] = safe_http.parse_allowed_hosts([entry])
    assert (rule.name, str(rule.network) if rule.network else None, rule.port) == expected


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "hooks.example:http", "hooks.example:0", "a/b"])
def test_it_refuses_a_malformed_allowed_host(entry: str) -> None:
    with pytest.raises(ValueError, match=r"neither a host name nor a network|no valid port"):
        safe_http.parse_allowed_hosts([entry])


@pytest.mark.parametrize("text", ["dns.example:53", "127.0.0.1:x", "127.0.0.1:70000"])
def test_it_refuses_a_resolver_that_is_not_an_address_and_port(text: str) -> None:
    with pytest.raises(ValueError, match=r"not an IP address|no valid port"):
        safe_http.parse_resolver_address(text)


# --- TLS: the certificate is checked against the URL's host name ----------------------------


@dataclass
class Certificates:
    authority: Path  # the trusted authority's certificate (PEM), for SSL_CERT_FILE
    directory: Path

    def server_context(self, name: str) -> ssl.SSLContext:
        """A server context with a certificate for `name`, signed by the authority."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.directory / f"{name}.pem", self.directory / f"{name}.key")
        return context


def _certificate(
    subject: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[str, Any], authority: bool
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer[0])]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=authority, path_length=None), critical=True)
    )
    if authority:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
        )
    else:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(subject)]), False)
    return builder.sign(issuer[1], hashes.SHA256())


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    directory = tmp_path_factory.mktemp("tls")
    authority_key = ec.generate_private_key(ec.SECP256R1())
    issuer = ("Test authority", authority_key)
    authority = _certificate("Test authority", authority_key, issuer, authority=True)
    (directory / "authority.pem").write_bytes(authority.public_bytes(serialization.Encoding.PEM))
    for name in ("hooks.test", "other.test"):
        key = ec.generate_private_key(ec.SECP256R1())
        leaf = _certificate(name, key, issuer, authority=False)
        (directory / f"{name}.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
        (directory / f"{name}.key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    return Certificates(directory / "authority.pem", directory)


@pytest.fixture
def trusted(certificates: Certificates, monkeypatch: pytest.MonkeyPatch) -> Certificates:
    """The test authority as the only trusted one (OpenSSL reads SSL_CERT_FILE)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.authority))
    return certificates


def test_it_verifies_the_certificate_against_the_urls_host_name(
    dns: ChangingResolver, trusted: Certificates, settings: Any
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["hooks.test"]
    context = trusted.server_context("hooks.test")
    receiver = Receiver()
    context.sni_callback = lambda _socket, name, _context: receiver.server_names.append(name)
    with serving(receiver, tls=context):
        answer = send(f"https://hooks.test:{receiver.port}/in", timeout=2)
    assert answer.status == 200
    assert receiver.server_names == ["hooks.test"]
    assert receiver.requests[0][1]["Host"] == f"hooks.test:{receiver.port}"


def test_it_refuses_a_certificate_for_another_name(
    dns: ChangingResolver, trusted: Certificates, settings: Any
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["hooks.test"]
    with (
        serving(Receiver(), tls=trusted.server_context("other.test")) as receiver,
        pytest.raises(DeliveryFailed) as failed,
    ):
        send(f"https://hooks.test:{receiver.port}/in", timeout=2)
    assert failed.value.reason == "tls"
    assert receiver.requests == []


def test_it_refuses_a_certificate_no_trusted_authority_signed(
    dns: ChangingResolver, certificates: Certificates, settings: Any
) -> None:
    dns.point("hooks.test", "127.0.0.1")
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["hooks.test"]
    with (
        serving(Receiver(), tls=certificates.server_context("hooks.test")) as receiver,
        pytest.raises(DeliveryFailed) as failed,
    ):
        send(f"https://hooks.test:{receiver.port}/in", timeout=2)
    assert failed.value.reason == "tls"
    assert receiver.requests == []
