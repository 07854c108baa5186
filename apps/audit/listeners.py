"""Who hears of each audit event as it is written: an explicit registry, not signals.

`audit_record` calls every registered listener with the new event, inside the caller's
transaction, so what a listener writes commits or rolls back with the change it describes
(apps/webhooks writes its outbox rows this way). A listener runs on every audited write:
it must return quickly when it has nothing to do, and must not write audit events itself.

A writer may hand over the object itself as it holds it after the change, with
`private(about=obj)`, so that listeners need not read it again (the webhooks, a new memory).

`private(**values)` hands listeners facts the audit row must not hold (the erased subject's
external id): they live only for the `with` block, in this thread, and are never stored by
the audit log.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apps.audit.models import AuditEvent

Listener = Callable[["AuditEvent", Any, Mapping[str, Any]], None]

_listeners: list[Listener] = []
_private: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "audit_private", default=None
)


def register(listener: Listener) -> None:
    """Call `listener(event, namespace, private)` after each event is appended (once per
    function, however often it is registered). `namespace` is the object the writer passed
    (or None)."""
    if listener not in _listeners:
        _listeners.append(listener)


def unregister(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


@contextmanager
def private(**values: Any) -> Iterator[None]:
    """Facts for the listeners of the events written inside the block, kept out of the log."""
    token = _private.set({**(_private.get() or {}), **values})
    try:
        yield
    finally:
        _private.reset(token)


def notify(event: AuditEvent, namespace: Any) -> None:
    """Tell every listener of `event` (in the caller's transaction)."""
    if not _listeners:
        return
    values = _private.get() or {}
    for listener in _listeners:
        listener(event, namespace, values)
