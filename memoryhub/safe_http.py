"""Outbound HTTP to addresses other people chose (webhook endpoints), without becoming a
way into the network MemoryHub runs in (server-side request forgery).

A destination is checked after DNS resolution: every address its name resolves to must be a
public one. Private (RFC 1918, unique-local), loopback, link-local (and with it the cloud
metadata service at 169.254.169.254), unspecified, multicast, reserved and shared (CGNAT,
100.64.0.0/10) addresses are refused, and so are IPv6 addresses that carry one of those
(IPv4-mapped, 6to4, Teredo, NAT64), and a few public addresses that are a cloud host's own
services (`METADATA_ADDRESSES`). One unsafe address refuses the whole name: a name that
resolves to a public and a private address would otherwise reach the private one some of the
time. The URL must be https.

`MEMORYHUB_WEBHOOK_ALLOWED_HOSTS` waives both rules for what it lists: a host name (its
addresses are not checked), or a network in CIDR form (the addresses in it are allowed, and
a name all of whose addresses are in listed networks may use http); either optionally with a
port (`hooks.internal:8443`, `10.0.0.0/8:8080`, `[fd00::/8]:443`), which the rule then
applies to alone.

DNS rebinding (a name that answers a public address to the check and a private one to the
connection) is defeated by connecting to an address the check returned, never to the name:
`post` resolves and checks the name again, then opens the TCP connection to a checked address
itself (urllib3's connection pool made for that address). The URL's host name still goes
where the receiver expects it: in the `Host` header, and for https in the TLS handshake's
server name (SNI, urllib3's `server_hostname`), against which OpenSSL verifies the
certificate (the default context: `check_hostname` and `CERT_REQUIRED`, the system's trusted
certificates, which `SSL_CERT_FILE` can replace). A certificate for another name, or one no
trusted authority signed, is a `DeliveryFailed("tls")`.

Names are resolved by the system resolver (`getaddrinfo`: /etc/hosts, then DNS), or, with
`MEMORYHUB_WEBHOOK_DNS_RESOLVER` (`address:port`), by asking that DNS server alone (dnspython).

Redirects are not followed (a 3xx is an answer like any other), connecting and each read wait
at most `MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS`, at most `READ_LIMIT_BYTES` of an answer's body
are read and its first `KEPT_BYTES` kept. An error never carries the answer's body.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import SplitResult, urlsplit

import dns.exception
import dns.resolver
import urllib3
from django.conf import settings
from urllib3.exceptions import HTTPError, NewConnectionError, SSLError
from urllib3.exceptions import TimeoutError as Urllib3Timeout

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# An answer's body: read at most this much of it, keep this much for the delivery log.
READ_LIMIT_BYTES = 64 * 1024
KEPT_BYTES = 1024
# A name with more addresses is tried on its first few only (each try may wait a timeout).
CONNECT_TRIES = 3
USER_AGENT = "MemoryHub-Webhooks"

# Public addresses that are a cloud host's own services, refused like private ones: Azure's
# WireServer, Alibaba Cloud's metadata service; and, though the rules above already refuse
# them, the metadata services of AWS (IPv4 and IPv6), GCP, Azure and ECS, named for the record.
METADATA_ADDRESSES: frozenset[Address] = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "168.63.129.16",
        "100.100.100.200",
        "169.254.169.254",
        "169.254.170.2",
        "fd00:ec2::254",
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

UnsafeReason = Literal["not_https", "private_address", "unresolvable", "bad_url"]
FailureReason = Literal["timeout", "connection", "tls"]


class UnsafeDestination(Exception):
    """The URL may not be called: `reason` is `not_https`, `private_address`,
    `unresolvable` or `bad_url`."""

    def __init__(self, reason: UnsafeReason, message: str) -> None:
        super().__init__(message)
        self.reason: UnsafeReason = reason


class DeliveryFailed(Exception):
    """No answer came back: `reason` is `timeout`, `connection` or `tls`."""

    def __init__(self, reason: FailureReason, message: str) -> None:
        super().__init__(message)
        self.reason: FailureReason = reason


@dataclass(frozen=True)
class Answer:
    """The receiver's answer: its status, the first `KEPT_BYTES` of its body, and the time
    from the first connection attempt to the end of reading."""

    status: int
    body: bytes
    elapsed_ms: float


@dataclass(frozen=True)
class AllowedHost:
    """One entry of MEMORYHUB_WEBHOOK_ALLOWED_HOSTS: a host name or a network, and a port
    (None: any)."""

    name: str | None
    network: Network | None
    port: int | None

    def allows_name(self, name: str, port: int) -> bool:
        return self.name == name and self.port in (None, port)

    def allows_address(self, address: Address, port: int) -> bool:
        return (
            self.network is not None
            and address.version == self.network.version
            and address in self.network
            and self.port in (None, port)
        )


@dataclass(frozen=True)
class _Target:
    scheme: str
    name: str  # the host as it goes to DNS, SNI and the Host header (IDNA, lower case)
    port: int
    path: str
    host_header: str


# --- Settings --------------------------------------------------------------------------------


def parse_allowed_hosts(entries: Iterable[str]) -> tuple[AllowedHost, ...]:
    """MEMORYHUB_WEBHOOK_ALLOWED_HOSTS' entries as rules; ValueError names a bad entry."""
    return tuple(_allowed_host(entry.strip()) for entry in entries if entry.strip())


def _allowed_host(entry: str) -> AllowedHost:
    host, port = entry, None
    if entry.startswith("["):  # [IPv6 address or network]:port
        host, _, rest = entry[1:].partition("]")
        port = _port(rest.removeprefix(":"), entry) if rest else None
    elif entry.count(":") == 1:  # name:port, address:port, network:port
        host, port_text = entry.split(":")
        port = _port(port_text, entry)
    try:
        return AllowedHost(None, ipaddress.ip_network(host, strict=False), port)
    except ValueError:
        pass
    name = _ascii_name(host.rstrip("."))
    if not name or "/" in name or ":" in name:
        raise ValueError(f"{entry!r} is neither a host name nor a network")
    return AllowedHost(name, None, port)


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{entry!r} has no valid port")
    return int(text)


def parse_resolver_address(text: str) -> tuple[str, int]:
    """MEMORYHUB_WEBHOOK_DNS_RESOLVER (`address`, `address:port` or `[IPv6]:port`) as
    (address, port); ValueError when it is not an IP address with a port."""
    host, port = text, 53
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = _port(rest.removeprefix(":"), text) if rest else 53
    elif text.count(":") == 1:
        host, port_text = text.split(":")
        port = _port(port_text, text)
    try:
        return str(ipaddress.ip_address(host)), port
    except ValueError:
        raise ValueError(f"{text!r} is not an IP address (with an optional port)") from None


def _timeout() -> float:
    return float(settings.MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS)


# --- Checks ----------------------------------------------------------------------------------


def is_public_address(address: Address) -> bool:
    """Whether an address is one of the public internet's, and no cloud host's own service."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _carried_ipv4_address(address)
        if embedded is not None and not is_public_address(embedded):
            return False
        if address.is_site_local:
            return False
    unsafe = (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
        or address.is_multicast
        or address.is_reserved
        or not address.is_global  # also CGNAT's 100.64.0.0/10, neither private nor global
    )
    return not unsafe and address not in METADATA_ADDRESSES


def _carried_ipv4_address(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo's client, NAT64)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def check_destination(url: str) -> list[Address]:
    """The addresses `url`'s host resolves to, each checked; raises UnsafeDestination.

    Side effects: DNS queries (none for an IP address in the URL)."""
    target = _target(url)
    return _checked_addresses(target)


def _checked_addresses(target: _Target) -> list[Address]:
    rules = parse_allowed_hosts(settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS)
    name_allowed = any(rule.allows_name(target.name, target.port) for rule in rules)
    if target.scheme != "https" and not name_allowed and not any(r.network for r in rules):
        raise UnsafeDestination("not_https", "Only https URLs may be called.")
    addresses = _resolve(target.name, target.port)
    in_allowed_networks = [
        any(rule.allows_address(address, target.port) for rule in rules) for address in addresses
    ]
    if target.scheme != "https" and not (name_allowed or all(in_allowed_networks)):
        raise UnsafeDestination("not_https", "Only https URLs may be called.")
    if not name_allowed:
        for address, allowed in zip(addresses, in_allowed_networks, strict=True):
            if not (allowed or is_public_address(address)):
                raise UnsafeDestination(
                    "private_address",
                    f"{target.name} resolves to {address}, which is not a public address.",
                )
    return addresses


def _target(url: str) -> _Target:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise UnsafeDestination("bad_url", "The URL cannot be parsed.") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeDestination("bad_url", "The URL needs https:// and a host.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeDestination("bad_url", "The URL may not hold a user name or password.")
    if port == 0:
        raise UnsafeDestination("bad_url", "The URL's port is 0.")
    name = _url_host(parts)
    default_port = 443 if parts.scheme == "https" else 80
    port = port or default_port
    shown = f"[{name}]" if ":" in name else name
    return _Target(
        scheme=parts.scheme,
        name=name,
        port=port,
        path=(parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
        host_header=shown if port == default_port else f"{shown}:{port}",
    )


def _url_host(parts: SplitResult) -> str:
    host = (parts.hostname or "").rstrip(".")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        name = _ascii_name(host)
    except ValueError:
        raise UnsafeDestination("bad_url", "The URL's host is not a valid name.") from None
    if not name or any(character in name for character in "%/\\ "):
        raise UnsafeDestination("bad_url", "The URL's host is not a valid name.")
    return name


def _ascii_name(host: str) -> str:
    """A host name in its ASCII (IDNA) form, lower case; ValueError when it has none."""
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ValueError(f"{host!r} is not a valid host name") from None


# --- Resolution ------------------------------------------------------------------------------


def _resolve(name: str, port: int) -> list[Address]:
    try:
        return [ipaddress.ip_address(name)]
    except ValueError:
        pass
    server = settings.MEMORYHUB_WEBHOOK_DNS_RESOLVER
    found = _ask_dns_server(name, server) if server else _ask_system(name, port)
    if not found:
        raise UnsafeDestination("unresolvable", f"{name} resolves to no address.")
    return list(dict.fromkeys(found))  # in order, once each


def _ask_system(name: str, port: int) -> list[Address]:
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    addresses: list[Address] = []
    for family, *_, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6):
            # An IPv6 sockaddr may carry a scope ("fe80::1%eth0"): dropped, the address stays.
            addresses.append(ipaddress.ip_address(str(sockaddr[0]).split("%")[0]))
    return addresses


def _ask_dns_server(name: str, server: str) -> list[Address]:
    address, port = parse_resolver_address(server)
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = [address]
    resolver.port = port
    resolver.timeout = resolver.lifetime = _timeout()
    found: list[Address] = []
    for record_type in ("A", "AAAA"):
        try:
            answer = resolver.resolve(name, record_type, search=False, raise_on_no_answer=False)
        except dns.resolver.NXDOMAIN:
            return []
        except dns.exception.DNSException:
            continue  # no server answered this type: the other may still resolve
        if answer.rrset is not None:
            found += [ipaddress.ip_address(record.to_text()) for record in answer.rrset]
    return found


# --- Sending ---------------------------------------------------------------------------------


def post(
    url: str, *, body: bytes, headers: Mapping[str, str], timeout: float | None = None
) -> Answer:
    """POST `body` to `url`, connected to an address checked just now, redirects not followed.

    Raises UnsafeDestination (checked before connecting: nothing is sent) or DeliveryFailed
    (nothing or only part of the request may have arrived). A status of any kind, 3xx to 5xx
    included, is an Answer."""
    target = _target(url)
    addresses = _checked_addresses(target)
    seconds = _timeout() if timeout is None else timeout
    sent_headers = {"User-Agent": USER_AGENT, **headers, "Host": target.host_header}
    for key in [key for key in sent_headers if key.lower() == "host" and key != "Host"]:
        del sent_headers[key]  # the URL's host, whatever the caller's headers said
    started = time.monotonic()
    last_error: DeliveryFailed | None = None
    for address in addresses[:CONNECT_TRIES]:
        try:
            return _send(target, address, body, sent_headers, seconds, started)
        except _Unreachable as error:
            last_error = DeliveryFailed("connection", str(error))
    raise last_error or DeliveryFailed("connection", "No address to connect to.")


class _Unreachable(Exception):
    """This address refused the connection or did not take it in time: try the next."""


def _send(
    target: _Target,
    address: Address,
    body: bytes,
    headers: dict[str, str],
    seconds: float,
    started: float,
) -> Answer:
    pool = _pool(target, address, seconds)
    try:
        response = pool.urlopen(
            "POST",
            target.path,
            body=body,
            headers=headers,
            redirect=False,
            retries=False,
            preload_content=False,
            decode_content=False,
            assert_same_host=False,
        )
    except NewConnectionError as error:  # before Urllib3Timeout: it is one of them too
        raise _Unreachable(f"Cannot connect to {address}: {type(error).__name__}") from None
    except SSLError as error:
        raise DeliveryFailed("tls", f"TLS with {target.name} failed: {error}") from None
    except Urllib3Timeout:
        raise DeliveryFailed("timeout", f"No answer within {seconds:g} s.") from None
    except (HTTPError, OSError) as error:
        failure = f"The connection failed: {type(error).__name__}"
        raise DeliveryFailed("connection", failure) from None
    try:
        kept = _read_capped(response, started + 2 * seconds)
    finally:
        response.release_conn()
        pool.close()
    return Answer(status=response.status, body=kept, elapsed_ms=(time.monotonic() - started) * 1000)


def _pool(target: _Target, address: Address, seconds: float) -> urllib3.HTTPConnectionPool:
    timeout = urllib3.Timeout(connect=seconds, read=seconds)
    if target.scheme == "https":
        return urllib3.HTTPSConnectionPool(
            str(address),
            target.port,
            timeout=timeout,
            maxsize=1,
            server_hostname=target.name,
            ssl_context=ssl.create_default_context(),
        )
    return urllib3.HTTPConnectionPool(str(address), target.port, timeout=timeout, maxsize=1)


def _read_capped(response: urllib3.BaseHTTPResponse, deadline: float) -> bytes:
    """The first KEPT_BYTES of a body read up to READ_LIMIT_BYTES, or until `deadline`, or
    until the receiver stops sending: the status already came, and is what counts."""
    read = bytearray()
    while len(read) < READ_LIMIT_BYTES and time.monotonic() < deadline:
        try:
            chunk = response.read(min(8192, READ_LIMIT_BYTES - len(read)), decode_content=False)
        except (HTTPError, OSError):
            break
        if not chunk:
            break
        read += chunk
    return bytes(read[:KEPT_BYTES])
