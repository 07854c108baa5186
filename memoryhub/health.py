"""Checks behind /readyz and the dashboard's status panel. Read-only, quick, content-free.

/healthz (liveness) checks nothing here: it answers while the process runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection

from memoryhub import maintenance, replica


@dataclass(frozen=True)
class Health:
    database: str
    pgvector: str | None
    broker: str
    error: str | None = None
    # Reported, never failing the check: without the replica, reads go to the primary.
    replica: dict[str, object] | None = None

    @property
    def ok(self) -> bool:
        return self.database == "ok" and self.broker in ("ok", "in-process")

    def as_dict(self) -> dict[str, object]:
        body: dict[str, object] = {
            "status": "ok" if self.ok else "error",
            "database": self.database,
            "pgvector": self.pgvector,
            "broker": self.broker,
        }
        if self.error:
            body["error"] = self.error
        if self.replica is not None:
            body["replica"] = self.replica
        return body


def check_database() -> tuple[str, str | None, str | None]:
    """(status, pgvector version, error class name) — never an error message with secrets."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
    except DatabaseError as error:
        connection.close()  # a broken connection must not be reused by the next request
        return "error", None, type(error).__name__
    return "ok", (row[0] if row else None), None


def check_broker(timeout: float = 2.0) -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "in-process"
    from memoryhub.celery import app

    try:
        with app.connection_for_write() as conn:
            # kombu-stubs: `timeout` is typed int | None; kombu adds it to time() (float is fine).
            conn.ensure_connection(max_retries=1, timeout=timeout)  # type: ignore[arg-type]  # stubs
    except Exception:  # any transport error means "unreachable" here
        return "error"
    return "ok"


def check_replica() -> dict[str, object] | None:
    """The replica's state (memoryhub/replica.py) when one is configured: "ok" while it
    serves reads, else why not ("lagging", "down", "not_in_recovery", "unknown"); its lag
    in seconds (0 when it has replayed all the primary has flushed) and the bound."""
    if not replica.configured():
        return None
    state = replica.replica_state()
    return {
        "status": state.status,
        "lag_seconds": None if state.lag_seconds is None else round(state.lag_seconds, 3),
        "max_lag_seconds": replica.max_lag(),
    }


def current_health() -> Health:
    database, pgvector, error = check_database()
    return Health(
        database=database,
        pgvector=pgvector,
        broker=check_broker(),
        error=error,
        replica=check_replica(),
    )


# An app's part of readiness: quick, content-free, and never the slow work itself (a check
# that finds a model not loaded starts its load elsewhere and answers "loading").
ReadinessCheck = Callable[[], str]
_readiness_checks: dict[str, ReadinessCheck] = {}

# What a check answers when ready; anything else names why not.
READY = frozenset({"ok", "in-process"})


def register_readiness_check(name: str, check: ReadinessCheck) -> None:
    """Adds `check` to /readyz under `name`: an app above this package reports on what it
    alone knows (apps.memories: its embedding models). `check` returns "ok" when ready, else
    a word saying why not ("loading", "error"). Registering a name again replaces it."""
    _readiness_checks[name] = check


@dataclass(frozen=True)
class Readiness:
    checks: dict[str, str]
    # Reported, never failing readiness: without the replica, reads go to the primary.
    replica: dict[str, object] | None = None

    @property
    def ready(self) -> bool:
        return all(status in READY for status in self.checks.values())

    def as_dict(self) -> dict[str, object]:
        body: dict[str, object] = {
            "status": "ready" if self.ready else "not_ready",
            "checks": self.checks,
        }
        if self.replica is not None:
            body["replica"] = self.replica
        return body


def current_readiness() -> Readiness:
    """Whether this process may be sent traffic: the database answers (and is not being
    restored), the broker does when one is configured ("in-process" without one), and every
    registered check says "ok"."""
    if maintenance.restoring():
        database = "restoring"
    else:
        database, _, _ = check_database()
    checks = {"database": database, "broker": check_broker()}
    checks.update({name: check() for name, check in _readiness_checks.items()})
    return Readiness(checks=checks, replica=check_replica() if database == "ok" else None)
