"""How the LLM endpoint is doing: its circuit breaker and its counters.

Both live in the cache (Redis in a deployment: shared by every worker and web process), so
that one worker's failures open the breaker for all, and the dashboard shows what the
workers saw. Counters hold numbers only: calls, failures, facts refused by reason, and the
latencies of the last calls; never a prompt, an answer or a key.

The breaker: MEMORYHUB_LLM_BREAKER_FAILURES failed calls in a row open it; while it is open
no call is made and the rules extract instead. After MEMORYHUB_LLM_BREAKER_COOLDOWN seconds
one call is let through: its success closes the breaker, its failure opens it again.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import cache

LATENCIES_KEPT = 200
_TTL = 30 * 86_400  # counters are kept a month after their last change


def _key(name: str, base_url: str | None = None) -> str:
    url = base_url if base_url is not None else (settings.MEMORYHUB_LLM_URL or "")
    digest = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:12]
    return f"memoryhub:llm:{digest}:{name}"


def _bump(key: str, by: int = 1) -> None:
    cache.add(key, 0, _TTL)
    try:
        cache.incr(key, by)
    except ValueError:  # evicted between add and incr
        cache.set(key, by, _TTL)


@dataclass(frozen=True)
class BreakerStatus:
    open: bool
    since: datetime | None = None  # when it opened (the first failure of the run)
    failures: int = 0  # failed calls in a row


def breaker_status(base_url: str | None = None) -> BreakerStatus:
    """The breaker's state (one cache read)."""
    keys = {name: _key(name, base_url) for name in ("failures", "opened_at")}
    found = cache.get_many(list(keys.values()))
    failures = int(found.get(keys["failures"], 0))
    opened = found.get(keys["opened_at"])
    since = datetime.fromtimestamp(float(opened), tz=UTC) if opened is not None else None
    return BreakerStatus(open=opened is not None, since=since, failures=failures)


def breaker_allows(base_url: str) -> bool:
    """Whether a call may be made now: the breaker is closed, or it has cooled down and this
    caller is the one let through to try (the others keep to the rules)."""
    if cache.get(_key("opened_at", base_url)) is None:
        return True
    if time.time() < float(cache.get(_key("retry_after", base_url), 0)):
        return False
    cooldown = max(1, int(settings.MEMORYHUB_LLM_BREAKER_COOLDOWN))
    return bool(cache.add(_key("probe", base_url), 1, cooldown))


_RUN = ("failures", "opened_at", "retry_after", "probe", "first")


def call_succeeded(base_url: str, seconds: float) -> None:
    _bump(_key("calls", base_url))
    cache.delete_many([_key(name, base_url) for name in _RUN])
    latencies = [*cache.get(_key("latencies", base_url), []), round(seconds, 4)]
    cache.set(_key("latencies", base_url), latencies[-LATENCIES_KEPT:], _TTL)


def call_failed(base_url: str, *, available: bool = False) -> None:
    """A call that got no usable answer: the endpoint down, slow or refusing, or (when
    `available`) an answer refused whole, which counts as a failure but not against the
    breaker. Enough unavailable calls in a row open the breaker (since the first of them);
    a failed probe starts the cooldown again."""
    now = time.time()
    _bump(_key("calls", base_url))
    _bump(_key("failed", base_url))
    if available:  # it answered: it is up
        cache.delete_many([_key(name, base_url) for name in _RUN])
        return
    cache.add(_key("first", base_url), now, _TTL)
    _bump(_key("failures", base_url))
    if int(cache.get(_key("failures", base_url), 0)) >= settings.MEMORYHUB_LLM_BREAKER_FAILURES:
        cache.add(_key("opened_at", base_url), cache.get(_key("first", base_url), now), _TTL)
        retry_after = now + settings.MEMORYHUB_LLM_BREAKER_COOLDOWN
        cache.set(_key("retry_after", base_url), retry_after, _TTL)
        cache.delete(_key("probe", base_url))


def facts_refused(reasons: dict[str, int], base_url: str | None = None) -> None:
    for reason, count in reasons.items():
        if count:
            _bump(_key(f"refused:{reason}", base_url), count)
    if reasons:
        known = set(cache.get(_key("reasons", base_url), []))
        cache.set(_key("reasons", base_url), sorted(known | set(reasons)), _TTL)


def fallback_used(base_url: str | None = None) -> None:
    _bump(_key("fallbacks", base_url))


@dataclass(frozen=True)
class LlmCounters:
    calls: int = 0
    failures: int = 0
    fallbacks: int = 0  # jobs that used the rules because the LLM could not answer
    refused: dict[str, int] = field(default_factory=dict)  # facts refused, by reason
    p50_seconds: float | None = None  # of the last LATENCIES_KEPT successful calls


def counters(base_url: str | None = None) -> LlmCounters:
    latencies = cache.get(_key("latencies", base_url), [])
    reasons = cache.get(_key("reasons", base_url), [])
    return LlmCounters(
        calls=int(cache.get(_key("calls", base_url), 0)),
        failures=int(cache.get(_key("failed", base_url), 0)),
        fallbacks=int(cache.get(_key("fallbacks", base_url), 0)),
        refused={r: int(cache.get(_key(f"refused:{r}", base_url), 0)) for r in reasons},
        p50_seconds=statistics.median(latencies) if latencies else None,
    )


def counters_reset(base_url: str | None = None) -> None:
    names = ["calls", "failed", "fallbacks", "latencies", "reasons", *_RUN]
    names += [f"refused:{r}" for r in cache.get(_key("reasons", base_url), [])]
    cache.delete_many([_key(n, base_url) for n in names])
