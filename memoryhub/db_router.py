"""The database router used when a replica is configured (memoryhub/replica.py).

Reads go where `replica.read_alias()` says: the replica only inside `reading_from_replica`,
and only until the request or job writes. Everything else reads the primary, including a
model read from the replica and then followed to its relations outside that block. Every
write goes to the primary, also of an object read from the replica. The replica holds the
primary's tables, so relations across the two aliases hold, and only the primary is migrated.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Model

from memoryhub import replica

_ALIASES = {replica.PRIMARY, replica.REPLICA}


class PrimaryReplicaRouter:
    def db_for_read(self, model: type[Model], **hints: Any) -> str:
        return replica.read_alias()

    def db_for_write(self, model: type[Model], **hints: Any) -> str:
        return replica.PRIMARY

    def allow_relation(self, first: Model, second: Model, **hints: Any) -> bool | None:
        if {first._state.db, second._state.db} <= _ALIASES:
            return True
        return None

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == replica.PRIMARY
