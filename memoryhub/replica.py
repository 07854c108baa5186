"""Reads from a streaming replica of the database, when DATABASE_REPLICA_URL names one.

What may read from it is said in the code, place by place: `reading_from_replica(read)` runs
`read()` with its reads on the replica (the router sends the ORM's there; raw SQL asks
`read_alias()`). Today those places are recall's candidate statements, the dashboard's list
pages (memories, subjects, audit log) and subject exports. Every other read goes to the
primary, and every write (memoryhub/db_router.py).

Even there, reads go to the primary
- after the request or job has written: an execute wrapper on the primary watches for
  INSERT, UPDATE, DELETE and the like, so a request reads what it wrote;
- while the replica may not hold what the request's client wrote in an earlier request: a
  request that wrote leaves the time (after its commit) in the shared cache under each
  credential it presented or was given (its Authorization header, its session cookies), and
  the next request presenting one reads the replica only once the replica is known to hold
  every commit made before then;
- in a job, until the replica is known to hold every commit made before the job started
  (a job is queued by a write: what it reads may be newer than the replica);
- while the replica lags by more than DATABASE_REPLICA_MAX_LAG_SECONDS, is out of reach, or
  is no longer in recovery (promoted), and outside requests and jobs (commands, shells),
  whose writes nothing watches.

Writes of the service's own records that nothing reads back at once (when a key was last
used, which memories a recall served) are `bookkeeping()`: they go to the primary like every
write, but leave the replica to the request's later reads and to its client's next requests.
Otherwise an app that recalls without pause would never read from the replica (each recall
logs itself); in exchange, a subject's export made within the lag bound of a recall may miss
that recall's log row.

The replica's state is probed at most once a second per process, a replica found down every
five seconds: the primary's flushed WAL position first, then the replica's replayed one. When
the replica has replayed that far it holds every commit made before the probe began (lag 0,
however idle the primary); when not, its lag is the time since its last replayed commit
(`pg_last_xact_replay_timestamp`) or since it was last seen caught up, whichever is shorter.
Times are compared across processes and machines: their clocks must agree (NTP).

A replica that fails during a read (stopped, restarting, a query cancelled by a conflict with
recovery) costs that read a second run on the primary and a log line naming the error's
class; reads go to the primary until the next probe. So `read` must only read, and be safe
to run twice.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.utils.crypto import salted_hmac

from memoryhub import row_security

logger = logging.getLogger(__name__)

PRIMARY = DEFAULT_DB_ALIAS
REPLICA = "replica"
PROBE_SECONDS = 1.0
DOWN_RETRY_SECONDS = 5.0
# While another thread of the process probes, its last state serves this long.
STALE_SECONDS = 2 * PROBE_SECONDS

T = TypeVar("T")


def configured() -> bool:
    """Whether a replica apart from the primary is configured. A test run makes the replica's
    alias a mirror of the primary's test database (the same settings): that is the primary."""
    if REPLICA not in connections.settings:
        return False
    return connections[REPLICA].settings_dict is not connections[PRIMARY].settings_dict


def max_lag() -> float:
    return float(getattr(settings, "DATABASE_REPLICA_MAX_LAG_SECONDS", 5.0))


# --- Which writes send reads to the primary ------------------------------------------------

_WRITE = re.compile(
    r"\s*(?:INSERT|UPDATE|DELETE|MERGE|COPY|TRUNCATE|REFRESH"
    r"|CREATE|ALTER|DROP|GRANT|REVOKE|DO|CALL)\b",
    re.IGNORECASE,
)
_WITH = re.compile(r"\s*WITH\b", re.IGNORECASE)
_DATA_CHANGE = re.compile(r"\b(?:INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)


def is_write(sql: object) -> bool:
    """Whether a statement may change data. A statement that is not text is counted as one."""
    if not isinstance(sql, str):
        return True
    return bool(_WRITE.match(sql) or (_WITH.match(sql) and _DATA_CHANGE.search(sql)))


@dataclass
class ReadScope:
    """A request or a job: whether it has written, and the time (time.time()) before which
    the replica must hold every commit for its reads to go there (None: any time)."""

    fresh_from: float | None = None
    wrote: bool = False
    # The client's credentials: when it last wrote is looked up (one cache round trip) only
    # when a read first asks for the replica; most requests never do.
    credentials: tuple[str, ...] = ()
    _looked_up: bool = False

    def required_freshness(self) -> float | None:
        if self.credentials and not self._looked_up:
            self._looked_up = True
            self.fresh_from = client_wrote_at(self.credentials)
        return self.fresh_from


_scope: ContextVar[ReadScope | None] = ContextVar("memoryhub_read_scope", default=None)
_bookkeeping: ContextVar[bool] = ContextVar("memoryhub_bookkeeping", default=False)
_reading: ContextVar[str | None] = ContextVar("memoryhub_replica_reading", default=None)


def _watching(scope: ReadScope) -> Callable[..., Any]:
    def watch(execute: Callable[..., Any], sql: Any, params: Any, many: bool, context: Any) -> Any:
        if not scope.wrote and not _bookkeeping.get() and is_write(sql):
            scope.wrote = True  # counted when sent: a write that fails and is caught counts too
        return execute(sql, params, many, context)

    return watch


@contextmanager
def read_scope(
    *, fresh_from: float | None = None, credentials: Iterable[str] = ()
) -> Iterator[ReadScope]:
    """A request or a job, from here to the end of the block: its writes on the primary are
    watched, and its reads may use the replica until it writes, and not before the replica
    holds `fresh_from`, or what the client presenting `credentials` last wrote."""
    scope = ReadScope(fresh_from=fresh_from, credentials=tuple(credentials))
    token = _scope.set(scope)
    try:
        with connections[PRIMARY].execute_wrapper(_watching(scope)):
            yield scope
    finally:
        _scope.reset(token)


@contextmanager
def bookkeeping() -> Iterator[None]:
    """Writes of the service's own records that no later read of the request, nor its
    client's next request, depends on (see the module's docstring)."""
    token = _bookkeeping.set(True)
    try:
        yield
    finally:
        _bookkeeping.reset(token)


_jobs: dict[str, ExitStack] = {}


def job_started(*, task_id: str, **signal: Any) -> None:
    """Celery's task_prerun: a job's scope, fresh from its start. A task run in the process
    of a request (no broker) is part of that request's scope."""
    if _scope.get() is not None or not configured():
        return
    stack = ExitStack()
    stack.enter_context(read_scope(fresh_from=time.time()))
    _jobs[task_id] = stack


def job_finished(*, task_id: str, **signal: Any) -> None:
    """Celery's task_postrun: the job's scope ends."""
    stack = _jobs.pop(task_id, None)
    if stack is not None:
        stack.close()


# --- What a client wrote, for its next requests ----------------------------------------------

_client_cookies: set[str] = set()


def client_cookie_register(name: str) -> None:
    """Count the cookie `name` (besides Django's session cookie) as a client's credential:
    what a request presenting it wrote is read from the primary by the next one that does."""
    _client_cookies.add(name)


def client_cookies() -> list[str]:
    return [settings.SESSION_COOKIE_NAME, *sorted(_client_cookies)]


def _mark_key(credential: str) -> str:
    # Keyed hashes: the shared cache never holds a credential.
    return "replica-wrote:" + salted_hmac("memoryhub.replica", credential).hexdigest()


def client_wrote_at(credentials: Iterable[str]) -> float | None:
    """When a client presenting any of `credentials` last wrote, if recently enough to
    matter (within the lag bound and a probe's age)."""
    keys = [_mark_key(credential) for credential in credentials]
    if not keys:
        return None
    return max(cache.get_many(keys).values(), default=None)


def client_wrote(credentials: Iterable[str], *, at: float) -> None:
    # Past this, a replica within the lag bound holds the write anyway.
    timeout = math.ceil(max_lag() + STALE_SECONDS + 1)
    marks = {_mark_key(credential): at for credential in credentials}
    if marks:
        cache.set_many(marks, timeout=timeout)


# --- The replica's state -------------------------------------------------------------------


@dataclass(frozen=True)
class ReplicaState:
    """`status`: "ok" (it serves), "lagging", "down", "not_in_recovery" or "unknown" (the
    primary did not answer, or another thread's probe is overdue). `fresh_as_of`: a
    time.time() before which every commit of the primary is on the replica (0: none known)."""

    status: str
    lag_seconds: float | None
    fresh_as_of: float
    probed_at: float  # time.monotonic()

    @property
    def serves(self) -> bool:
        return self.status == "ok"


_state: ReplicaState | None = None
_probing = threading.Lock()

_LAG_SQL = """
    SELECT pg_is_in_recovery(),
           pg_last_wal_replay_lsn() >= %s::pg_lsn,
           EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8
"""


def replica_state() -> ReplicaState:
    """The replica's state, probed again when the last probe is older than PROBE_SECONDS
    (DOWN_RETRY_SECONDS for a replica found down)."""
    state = _state
    now = time.monotonic()
    if state is not None:
        age = DOWN_RETRY_SECONDS if state.status == "down" else PROBE_SECONDS
        if now - state.probed_at < age:
            return state
    if not _probing.acquire(blocking=False):
        if state is not None and now - state.probed_at < STALE_SECONDS:
            return state
        return ReplicaState("unknown", None, 0.0, now)
    try:
        return _remember(*_probe(state))
    finally:
        _probing.release()


def forget_state() -> None:
    """Probe afresh at the next read (after the replica's settings changed)."""
    global _state
    _state = None


def _remember(state: ReplicaState, reason: str = "") -> ReplicaState:
    global _state
    before, _state = _state, state
    if before is not None and before.serves == state.serves:
        return state
    if state.serves:
        logger.info("Reads go to the replica (lag %.1f s).", state.lag_seconds or 0.0)
    else:
        # The status word and an error's class: no statement, no parameters, no content.
        logger.warning(
            "Reads go to the primary: the replica is %s%s.",
            state.status,
            f" ({reason})" if reason else "",
        )
    return state


def _probe(before: ReplicaState | None) -> tuple[ReplicaState, str]:
    """(the state, the class of the error that made it down or unknown)."""
    started = time.time()
    try:
        with connections[PRIMARY].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_flush_lsn()::text")
            (flushed,) = cursor.fetchone()
    except DatabaseError as error:
        return ReplicaState("unknown", None, 0.0, time.monotonic()), type(error).__name__
    try:
        with connections[REPLICA].cursor() as cursor:
            cursor.execute(_LAG_SQL, [flushed])
            in_recovery, caught_up, since_replay = cursor.fetchone()
    except DatabaseError as error:
        _close_replica()
        return ReplicaState("down", None, 0.0, time.monotonic()), type(error).__name__
    finished = time.time()
    if not in_recovery:
        return ReplicaState("not_in_recovery", None, 0.0, time.monotonic()), ""
    if caught_up:
        return ReplicaState("ok", 0.0, started, time.monotonic()), ""
    fresh = finished - since_replay if since_replay is not None else 0.0
    if before is not None and before.status in ("ok", "lagging"):
        fresh = max(fresh, before.fresh_as_of)  # replay only moves forward
    lag = finished - fresh if fresh else None
    status = "ok" if lag is not None and lag <= max_lag() else "lagging"
    return ReplicaState(status, lag, fresh, time.monotonic()), ""


def _close_replica() -> None:
    with contextlib.suppress(DatabaseError):  # a broken connection is closed all the same
        connections[REPLICA].close()


# --- Reading ---------------------------------------------------------------------------------

_FROM_REPLICA = "memoryhub_from_replica"


def read_alias() -> str:
    """Where a read goes now: the replica inside `reading_from_replica` (until the request
    or job writes), else the primary. Raw SQL runs on `connections[read_alias()]`."""
    if _reading.get() == REPLICA:
        scope = _scope.get()
        if scope is not None and not scope.wrote:
            return REPLICA
    return PRIMARY


def reading_from_replica(read: Callable[[], T]) -> T:
    """`read()`, its reads on the replica when the replica may serve them (see the module's
    docstring), else on the primary; run again on the primary if the replica fails meanwhile.
    `read` must only read, and be safe to run twice."""
    if _reading.get() is not None or not _may_read_replica():
        return read()
    try:
        with _on_replica():
            return read()
    except DatabaseError as error:
        if not getattr(error, _FROM_REPLICA, False):
            raise
        _replica_failed(error)
    return read()


def _may_read_replica() -> bool:
    scope = _scope.get()
    if scope is None or scope.wrote or not configured():
        return False
    state = replica_state()
    if not state.serves:
        return False
    fresh_from = scope.required_freshness()
    if fresh_from is not None and state.fresh_as_of < fresh_from:
        return False
    replica = connections[REPLICA]
    try:
        replica.close_if_health_check_failed()
        replica.ensure_connection()
    except DatabaseError as error:
        _replica_failed(error)
        return False
    return True


def _replica_failed(error: DatabaseError) -> None:
    _close_replica()
    _remember(ReplicaState("down", None, 0.0, time.monotonic()), type(error).__name__)


def _mark_replica_errors(
    execute: Callable[..., Any], sql: Any, params: Any, many: bool, context: Any
) -> Any:
    try:
        return execute(sql, params, many, context)
    except DatabaseError as error:
        setattr(error, _FROM_REPLICA, True)
        raise


@contextmanager
def _on_replica() -> Iterator[None]:
    """Reads on the replica for the block; walled to the namespace the primary's transaction
    is walled to, if any (memoryhub/row_security.py): the database's own wall holds there
    too. An error of the replica's (a statement, or its transaction's start or end) is marked
    so; the block's own errors pass as they are."""
    token = _reading.set(REPLICA)
    walled = getattr(connections[PRIMARY], "memoryhub_walled", None)
    raised: BaseException | None = None
    try:
        with connections[REPLICA].execute_wrapper(_mark_replica_errors), ExitStack() as stack:
            if walled is not None:
                stack.enter_context(row_security.namespace_wall(walled, using=REPLICA))
            try:
                yield
            except BaseException as error:
                raised = error
                raise
    except DatabaseError as error:
        # Not the block's: the transaction's (its rollback on a broken connection reconnects).
        if error is not raised:
            setattr(error, _FROM_REPLICA, True)
        raise
    finally:
        _reading.reset(token)
