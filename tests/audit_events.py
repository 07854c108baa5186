"""Assertions about the audit log that every app's tests share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from apps.audit.models import AuditEvent
from apps.audit.selectors import audit_chain_verify


@contextmanager
def one_event(action: str) -> Iterator[list[AuditEvent]]:
    """Asserts the block writes exactly one audit event, named `action`, and that the chain
    still verifies; yields it (in a list, filled when the block ends)."""
    before = AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
    found: list[AuditEvent] = []
    yield found
    events = list(AuditEvent.objects.filter(id__gt=before))
    assert [event.action for event in events] == [action]
    found.extend(events)
    checked, broken = audit_chain_verify()
    assert broken is None
    assert checked > 0


@contextmanager
def no_event() -> Iterator[None]:
    """Asserts the block writes no audit event."""
    before = AuditEvent.objects.count()
    yield
    assert AuditEvent.objects.count() == before
