"""Mem0's client authenticates with `Authorization: Token <key>`: accepted here, under
/mem0/ only, with everything else of MemoryHub's key authentication (refusals audited and
counted per address, keys never in a URL)."""

from __future__ import annotations

from typing import ClassVar

from apps.accounts.api.authentication import ApiKeyAuthentication


class Mem0TokenAuthentication(ApiKeyAuthentication):
    keywords: ClassVar[tuple[bytes, ...]] = (b"token", b"bearer")

    def authenticate_header(self, request: object) -> str:
        return 'Token realm="memoryhub"'
