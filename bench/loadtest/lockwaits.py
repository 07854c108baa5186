"""Samples, while a load phase runs, the database sessions waiting for an audit chain's head.

Every 100 ms one query of `pg_stat_activity` (the waiting statement and its wait) on a
connection of its own: a session waiting for a lock (`wait_event_type` Lock) whose statement
takes a chain head is an audited write held back by another write's append, which keeps the
head until its commit. The statement says which head: the single head every namespace
shares (`last_id = last_id + 1 WHERE id = 1`, an install with one chain), or a chain's own
(`WHERE id = <namespace id>`, 0 for the global chain of events without a namespace). A wait
on the shared head is a wait between namespaces; a wait on a namespace's own head is a wait
behind a write of the same namespace.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, field

import psycopg

INTERVAL = 0.1
_WAITING = """
    SELECT query FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'
      AND query LIKE '%%audit_chainhead%%' AND pid <> pg_backend_pid()
"""
_HEAD = re.compile(r"WHERE id = (-?\d+)")


def head_of(statement: str) -> str:
    """Which head a waiting statement takes: "shared", "global" or "namespace"."""
    if "last_id + 1" in statement:
        return "shared"
    found = _HEAD.search(statement)
    return "global" if found and int(found.group(1)) == 0 else "namespace"


@dataclass
class HeadWaits:
    """Sampled waits: how many samples, how many of them had a writer waiting, and the
    waiting sessions by head ("shared", "global", "namespace")."""

    samples: int = 0
    samples_waiting: int = 0
    waiting: Counter[str] = field(default_factory=Counter)

    def __str__(self) -> str:
        if not self.samples:
            return "chain-head lock waits: not sampled"
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.waiting.items()))
        return (
            f"chain-head lock waits: {self.samples_waiting} of {self.samples} samples "
            f"({self.samples_waiting / self.samples:.1%}) had a writer waiting; waiting "
            f"sessions by head: {kinds or 'none'} (shared = between namespaces)"
        )


class HeadWaitSampler:
    """Samples in a thread from start() to stop(), which returns what it saw."""

    def __init__(self, connection_kwargs: dict[str, object]) -> None:
        self._kwargs = connection_kwargs
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.waits = HeadWaits()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> HeadWaits:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        return self.waits

    def _run(self) -> None:
        with psycopg.connect(**self._kwargs, autocommit=True) as conn:  # type: ignore[arg-type]
            while not self._stop.wait(INTERVAL):
                statements = [row[0] for row in conn.execute(_WAITING).fetchall()]
                self.waits.samples += 1
                if statements:
                    self.waits.samples_waiting += 1
                    self.waits.waiting.update(head_of(statement) for statement in statements)
