"""When a failed call is sent again, and after how long."""

from __future__ import annotations

import random
from dataclasses import dataclass

from memoryhub_client.errors import MemoryHubError, NetworkError, RateLimited, ServiceUnavailable


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """`attempts` sends at most (1: never again). A 429 is sent again for any call: the API
    refuses a throttled request whole, before doing anything. A 503 or a lost connection is
    sent again only for calls that are safe to repeat: reads, deletes, and writes carrying
    an Idempotency-Key. The wait is the answer's Retry-After, or exponential backoff with
    jitter; a Retry-After longer than `max_retry_after` is not waited for (the error is
    raised, with its `retry_after`)."""

    attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, error: MemoryHubError, *, attempt: int, repeatable: bool) -> float | None:
        """Seconds to wait before sending again after `error` on send number `attempt`, or
        None to raise it."""
        if attempt >= self.attempts:
            return None
        if isinstance(error, RateLimited):
            retry_after = error.retry_after
        elif isinstance(error, ServiceUnavailable | NetworkError) and repeatable:
            retry_after = getattr(error, "retry_after", None)
        else:
            return None
        if retry_after is None:
            return self._backoff(attempt)
        return retry_after if retry_after <= self.max_retry_after else None

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        # Full jitter on the upper half: clients throttled together do not return together.
        return ceiling * random.uniform(0.5, 1.0)  # noqa: S311  # timing, not secrecy


NO_RETRIES = RetryPolicy(attempts=1)
