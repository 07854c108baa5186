"""The address a request came from: REMOTE_ADDR, or behind MEMORYHUB_TRUSTED_PROXIES reverse
proxies the entry of X-Forwarded-For that the outermost trusted proxy wrote. Every per-address
limit (failed logins, failed API keys) and the audit log's `ip` read it from here: behind a
proxy, REMOTE_ADDR is the proxy, and a limit on it would lock everybody out at once."""

from __future__ import annotations

from typing import Any

from django.conf import settings


def client_address(request: Any) -> str | None:
    remote = request.META.get("REMOTE_ADDR") or None
    proxies = settings.MEMORYHUB_TRUSTED_PROXIES
    if not proxies:
        return remote
    # Each proxy appends the address it saw: the last `proxies` entries are theirs to vouch
    # for, and the one before the first of them is the client's. Earlier ones are the
    # client's own claims, never trusted.
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [part for part in forwarded if part]
    if len(forwarded) < proxies:
        return remote
    return forwarded[-proxies]
