"""The webhook event types: what an endpoint may subscribe to (docs/webhooks.md describes
each one's data)."""

from __future__ import annotations

# The events an endpoint may subscribe to, in the documented order.
EVENT_TYPES = (
    "memory.created",
    "memory.updated",
    "memory.superseded",
    "memory.ended",
    "memory.disputed",
    "memory.deleted",
    "subject.erased",
    "subject.exported",
    "review.resolved",
    "purge.completed",
    "retention.applied",
    "audit.verification_failed",
)
TEST_EVENT = "webhook.test"  # sent by "send a test event" to one endpoint, never subscribed
# Events about one memory: an include_content endpoint gets the memory's current text.
MEMORY_EVENTS = frozenset(t for t in EVENT_TYPES if t.startswith("memory."))
