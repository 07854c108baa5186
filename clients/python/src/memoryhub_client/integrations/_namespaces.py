"""The namespace an adapter was given, sync or async, and the framework call it serves."""

from __future__ import annotations

from typing import TypeAlias

from memoryhub_client.async_client import AsyncNamespace
from memoryhub_client.sync_client import Namespace

AnyNamespace: TypeAlias = Namespace | AsyncNamespace


def synchronous(namespace: AnyNamespace, call: str) -> Namespace:
    """The namespace, for a framework's synchronous `call`; TypeError for an async one (its
    client lives in an event loop that a synchronous call cannot enter)."""
    if isinstance(namespace, AsyncNamespace):
        raise TypeError(
            f"{call} is synchronous but was given an AsyncNamespace: use the framework's "
            "async call instead, or give the adapter a Namespace (from MemoryHub)."
        )
    return namespace
