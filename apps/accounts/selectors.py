"""Finding the API key behind a raw bearer token."""

from __future__ import annotations

import hmac
import re

from apps.accounts.models import ApiKey
from apps.accounts.services import KEY_PREFIX, hash_secret
from apps.namespaces.models import Namespace
from memoryhub.exceptions import NotFound

RAW_KEY_PATTERN = re.compile(
    rf"^{KEY_PREFIX}(?P<prefix>[0-9a-f]{{12}})_(?P<secret>[A-Za-z0-9_-]{{20,128}})$"
)


def api_key_prefix_of(raw: str) -> str:
    """The lookup prefix of a raw key, or '' when it is not shaped like one (safe to log)."""
    match = RAW_KEY_PATTERN.match(raw)
    return match.group("prefix") if match else ""


def api_key_for_raw(raw: str) -> ApiKey | None:
    """The usable key matching `raw`: right prefix, right secret (constant-time), not revoked
    or expired. None otherwise, without saying which check failed."""
    match = RAW_KEY_PATTERN.match(raw)
    if match is None:
        return None
    api_key = ApiKey.objects.filter(prefix=match.group("prefix")).first()
    if api_key is None:
        hash_secret(match.group("secret"))  # same work either way: no timing hint
        return None
    if not hmac.compare_digest(api_key.secret_hash, hash_secret(match.group("secret"))):
        return None
    if not api_key.is_usable:
        return None
    return api_key


def namespace_for_api_key(api_key: ApiKey, slug: str) -> Namespace:
    """A namespace in the key's scope; any other slug is NotFound, like one that never was."""
    namespace = api_key.namespaces.filter(slug=slug).first()
    if namespace is None:
        raise NotFound("Namespace not found.")
    return namespace
