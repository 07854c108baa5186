"""The portal's secrets: link tokens, session keys and receipt codes. Each is random, shown
once and stored only as its SHA-256 hash. Each names its namespace before the random part
(`<namespace id>.<random>`), so the row it opens is found in that namespace alone: on an
install distributed by namespace, on one shard. The hash covers the whole secret, so a
changed namespace finds nothing. A secret issued without one (before secrets named their
namespace) is still found by its hash alone."""

from __future__ import annotations

import hashlib
import secrets
from typing import TypeVar

from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)
_MAX_ID_DIGITS = 18  # within a bigint


def secret_issue(namespace_id: int) -> str:
    return f"{namespace_id}.{secrets.token_urlsafe(32)}"


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_namespace(secret: str) -> int | None:
    """The namespace id a secret names, or None."""
    head, dot, _random = secret.partition(".")
    if not dot or not (head.isascii() and head.isdigit()) or len(head) > _MAX_ID_DIGITS:
        return None
    return int(head)


def by_secret(rows: QuerySet[M], field: str, secret: str) -> QuerySet[M]:
    """The rows whose `field` is the secret's hash, in the namespace it names."""
    rows = rows.filter(**{field: secret_hash(secret)})
    namespace_id = secret_namespace(secret)
    return rows if namespace_id is None else rows.filter(namespace_id=namespace_id)
