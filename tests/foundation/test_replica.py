"""Reads from a real streaming replica (memoryhub/replica.py, memoryhub/db_router.py).

The embedded PostgreSQL's own programs copy the test database's server (`pg_basebackup`) and
start the copy as a hot standby of it (`standby.signal`, `primary_conninfo`), listening on
127.0.0.1; the replica alias points at it. Which server answered a request shows in what it
answered: with the standby's replay paused, a memory written since is on the primary only.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.db import connection, connections
from django.test import Client
from rest_framework.test import APIClient

from apps.audit.actors import Actor
from apps.memories.models import Memory, Subject
from apps.memories.services import NewMemory, memory_create, subject_erase
from apps.recall.models import RecallLog
from apps.recall.services import NewRecallLog, recall_log_create
from memoryhub import embedded_db, replica
from tests.conftest import ALL_PERMISSIONS, PROJECT_ROOT, Tenant, api_client, make_api_key

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", replica.REPLICA])
ROUTER = "memoryhub.db_router.PrimaryReplicaRouter"
DEADLINE_SECONDS = 30.0
ACTOR = Actor.system("tests")
FIRST = "Ada sails a small boat on Sundays"
SECOND = "Ada sails across the lake with her sister"


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"Gave up waiting for {what} after {DEADLINE_SECONDS:.0f} s.")
        time.sleep(0.05)


def _primary_flushed() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_flush_lsn()::text")
        return str(cursor.fetchone()[0])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Standby:
    """A hot standby of the test database's server: its data directory and log in `home`."""

    home: Path
    port: int
    database: str

    @property
    def pgdata(self) -> Path:
        return self.home / "pgdata"

    def pg_ctl(self, *arguments: str) -> None:
        done = subprocess.run(
            [str(embedded_db.program("pg_ctl")), "-D", str(self.pgdata), *arguments],
            user=embedded_db.system_user(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # the server's output goes to its log, not to a pipe
            stderr=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            log = self.home / "log"
            tail = log.read_text()[-3000:] if log.exists() else "(no log)"
            pytest.fail(f"pg_ctl {' '.join(arguments)} failed:\n{tail}")

    def start(self) -> None:
        # TCP on loopback only (no socket file); small buffers; a replay that waits for a
        # conflicting standby query cancels it after 2 s rather than 30.
        options = (
            f"-p {self.port} -h 127.0.0.1 -k '' -c shared_buffers=128MB -c fsync=off"
            " -c max_standby_streaming_delay=2s"
        )
        self.pg_ctl("-w", "-t", "60", "-l", str(self.home / "log"), "-o", options, "start")

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("-w", "-m", mode, "stop")

    def connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user="postgres",
            dbname=self.database,
            autocommit=True,
            connect_timeout=5,
        )

    def fetch(self, sql: str, params: list[Any] | None = None) -> Any:
        with self.connect() as standby:
            row = standby.execute(sql, params).fetchone()
        return row[0] if row else None

    def catch_up(self) -> None:
        """Wait until the standby has replayed all the primary has flushed by now."""
        position = _primary_flushed()
        _wait_until(
            lambda: bool(self.fetch("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [position])),
            "the standby to replay the primary's WAL",
        )

    @contextmanager
    def replay_paused(self) -> Iterator[None]:
        """Replay stopped once caught up: what the primary commits in the block is not on the
        standby (it still receives it, and replays it after the block)."""
        self.catch_up()
        self.fetch("SELECT pg_wal_replay_pause()")
        _wait_until(
            lambda: self.fetch("SELECT pg_get_wal_replay_pause_state()") == "paused",
            "the standby's replay to pause",
        )
        try:
            yield
        finally:
            self.fetch("SELECT pg_wal_replay_resume()")


def _base_backup(home: Path, primary: dict[str, Any]) -> None:
    """The primary's data directory copied into `home`/pgdata, with its WAL streamed along,
    then made a standby that streams from the primary (over its socket)."""
    user = embedded_db.system_user()
    pgdata = home / "pgdata"
    copied = subprocess.run(
        [
            str(embedded_db.program("pg_basebackup")),
            *("-D", str(pgdata), "-h", primary["HOST"], "-p", str(primary["PORT"])),
            *("-U", "postgres", "-X", "stream", "--checkpoint=fast", "--no-sync"),
        ],
        user=user,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert copied.returncode == 0, copied.stderr[-3000:]
    (pgdata / "standby.signal").touch()
    with (pgdata / "postgresql.auto.conf").open("a") as conf:
        conf.write(
            f"primary_conninfo = 'host={primary['HOST']} port={primary['PORT']} user=postgres"
            " application_name=memoryhub_test_standby'\n"
        )
    if user is not None:
        shutil.chown(pgdata / "standby.signal", user, user)


def _replica_settings(standby: Standby) -> dict[str, Any]:
    return {
        "ENGINE": "memoryhub.postgres_backend",
        "NAME": standby.database,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": "127.0.0.1",
        "PORT": str(standby.port),
        "ATOMIC_REQUESTS": False,
        "AUTOCOMMIT": True,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": True,
        "TIME_ZONE": None,
        "OPTIONS": {"connect_timeout": 2, "options": django_settings.HNSW_SEARCH_OPTIONS},
        # Kept a mirror for the test runner: it never creates nor flushes the standby.
        "TEST": {"CHARSET": None, "COLLATION": None, "MIGRATE": True, "MIRROR": "default"},
    }


def _forget_replica_connection() -> None:
    if replica.REPLICA in connections.settings:
        connections[replica.REPLICA].close()
        del connections[replica.REPLICA]


@pytest.fixture(scope="module")
def standby(django_db_setup: None, django_db_blocker: Any) -> Iterator[Standby]:
    """A standby of the test database's server, made once the test database exists, and
    the replica alias pointed at it for the module."""
    if connection.settings_dict["ENGINE"] != "memoryhub.embedded_backend":
        pytest.skip("The standby is made with the embedded PostgreSQL's programs, from its server.")
    home = PROJECT_ROOT / "var" / "test-scratch" / f"standby-{uuid.uuid4().hex[:12]}"
    home.mkdir(parents=True)
    user = embedded_db.system_user()
    if user is not None:
        shutil.chown(home, user, user)
    previous = connections.settings.get(replica.REPLICA)
    node = None
    try:
        with django_db_blocker.unblock():
            connection.ensure_connection()
            primary = connection.settings_dict
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT current_setting('wal_level'), current_setting('max_wal_senders')"
                )
                wal_level, senders = cursor.fetchone()
            # PostgreSQL's defaults (replica, 10): the test harness's server streams as it is.
            assert wal_level in ("replica", "logical")
            assert int(senders) >= 3
            _base_backup(home, primary)
            node = Standby(home=home, port=_free_port(), database=primary["NAME"])
            node.start()
            node.catch_up()
        _forget_replica_connection()
        connections.settings[replica.REPLICA] = _replica_settings(node)
        yield node
    finally:
        _forget_replica_connection()
        if previous is None:
            connections.settings.pop(replica.REPLICA, None)
        else:
            connections.settings[replica.REPLICA] = previous
        if node is not None and (node.pgdata / "postmaster.pid").exists():
            node.stop("immediate")
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def routed(standby: Standby, transactional_db: None, settings: Any) -> Iterator[Standby]:
    """Reads routed as in production with a replica, which may lag by 30 s (replay is paused
    in tests for a few seconds at most): caught up, its state probed afresh."""
    settings.DATABASE_ROUTERS = [ROUTER]
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 30.0
    standby.catch_up()
    replica.forget_state()
    yield standby
    replica.forget_state()
    connections[replica.REPLICA].close()


def remember(tenant: Tenant, content: str, subject: str = "ada") -> Memory:
    return memory_create(
        actor=ACTOR,
        namespace=tenant.namespace,
        item=NewMemory(subject_external_id=subject, content=content),
    )


def recalled(client: APIClient, tenant: Tenant, query: str = "Ada sails") -> set[str]:
    """What a recall of the subject served (its memories' content)."""
    response = client.post(tenant.url("recall"), {"subject": "ada", "query": query}, format="json")
    assert response.status_code == 200, response.content
    return {result["memory"]["content"] for result in response.json()["results"]}


def test_it_serves_recall_from_the_replica(routed: Standby, acme: Tenant) -> None:
    remember(acme, FIRST)
    with routed.replay_paused():
        remember(acme, SECOND)  # on the primary only
        response = acme.client.post(
            acme.url("recall"), {"subject": "ada", "query": "Ada sails"}, format="json"
        )
    assert response.status_code == 200, response.content
    assert [result["memory"]["content"] for result in response.json()["results"]] == [FIRST]
    # The recall's log row was written to the primary, as every write is.
    log = RecallLog.objects.using("default").get(pk=response.json()["recall_id"])
    assert [str(memory_id) for memory_id in log.memory_ids] == [
        response.json()["results"][0]["memory"]["id"]
    ]
    # Replayed, the standby serves both.
    routed.catch_up()
    assert recalled(acme.client, acme) == {FIRST, SECOND}


def test_a_clients_write_is_read_back_by_its_next_request(routed: Standby, acme: Tenant) -> None:
    other_app = api_client(make_api_key([acme.namespace], ALL_PERMISSIONS, name="other app"))
    remember(acme, FIRST)
    with routed.replay_paused():
        created = acme.client.post(
            acme.url("memories"), {"subject": "ada", "content": SECOND}, format="json"
        )
        assert created.status_code == 201, created.content
        by_the_writer = recalled(acme.client, acme)
        by_another_app = recalled(other_app, acme)
    assert by_the_writer == {FIRST, SECOND}
    # The replica had not replayed it: only the writer's next request read the primary.
    assert by_another_app == {FIRST}


def test_a_dashboard_list_is_read_from_the_replica_but_an_editors_next_page_sees_the_edit(
    routed: Standby, acme: Tenant, alice_client: Client
) -> None:
    memory = remember(acme, FIRST)
    bob = User.objects.create_superuser("bob", "bob@example.com", "bob-password-1")
    bob_client = Client()
    bob_client.force_login(bob)
    explorer = "/n/acme/memories/"
    with routed.replay_paused():
        remember(acme, SECOND)  # on the primary only
        edited = alice_client.post(
            f"/n/acme/memories/{memory.pk}/edit/",
            {
                "content": "Ada sails a catamaran on Sundays",
                "kind": "semantic",
                "tags": "",
                "importance": "0.5",
                "reason": "a correction",
            },
        )
        assert edited.status_code == 302, edited.content
        alices_list = alice_client.get(explorer).content.decode()
        bobs_list = bob_client.get(explorer).content.decode()
    assert "catamaran" in alices_list
    assert SECOND in alices_list
    # Bob wrote nothing: his list came from the replica, as it was when its replay paused.
    assert FIRST in bobs_list
    assert "catamaran" not in bobs_list
    assert SECOND not in bobs_list


def test_a_subject_the_primary_has_erased_is_not_served_from_the_replica(
    routed: Standby, acme: Tenant, alice_client: Client
) -> None:
    remember(acme, FIRST)
    remember(acme, "Bea sails a red dinghy", subject="bea")
    with routed.replay_paused():
        subject_erase(actor=ACTOR, subject=Subject.objects.get(external_id="bea"), via="api")
        # The dashboard's search of the whole namespace: the replica still holds Bea's memory.
        searched = alice_client.post("/n/acme/memories/", {"q": "sails dinghy"})
    assert searched.status_code == 200
    page = searched.content.decode()
    assert FIRST in page
    assert "Bea sails a red dinghy" not in page


def test_it_reads_the_primary_while_the_replica_lags_beyond_the_bound(
    routed: Standby, acme: Tenant, client: Client, settings: Any
) -> None:
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 0.5
    remember(acme, FIRST)
    # Replayed before the pause: the standby knows when it last replayed, so its lag is a
    # number that only grows while replay is paused (never "unknown since when").
    routed.catch_up()
    with routed.replay_paused():
        remember(acme, SECOND)  # on the primary only, and the standby's lag grows

        def lagging() -> bool:
            return client.get("/readyz").json()["replica"]["status"] == "lagging"

        _wait_until(lagging, "/readyz to report the standby lagging")
        health = client.get("/readyz")
        served = recalled(acme.client, acme)
    assert health.status_code == 200
    assert health.json()["status"] == "ready"
    assert health.json()["replica"]["lag_seconds"] > 0.5
    assert health.json()["replica"]["max_lag_seconds"] == 0.5
    assert served == {FIRST, SECOND}


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_a_stopped_replica_costs_only_a_fallback_to_the_primary(
    routed: Standby, acme: Tenant, alice_client: Client, client: Client
) -> None:
    remember(acme, FIRST)
    routed.catch_up()
    assert client.get("/readyz").json()["replica"]["status"] == "ok"
    assert recalled(acme.client, acme) == {FIRST}  # the replica's answer, its state kept
    routed.stop()
    try:
        assert recalled(acme.client, acme) == {FIRST}
        page = alice_client.get("/n/acme/memories/")
        assert page.status_code == 200
        assert FIRST in page.content.decode()
        export = acme.client.get(acme.url("subjects/ada/export"))
        assert export.status_code == 200
        assert [memory["content"] for memory in export.json()["memories"]] == [FIRST]
        health = client.get("/readyz")
        assert health.status_code == 200
        assert health.json()["status"] == "ready"
        assert health.json()["replica"]["status"] == "down"
    finally:
        routed.start()


def test_a_request_reads_the_primary_once_it_has_written(routed: Standby, acme: Tenant) -> None:
    def where() -> str:
        return replica.reading_from_replica(replica.read_alias)

    routed.catch_up()  # the namespace replayed: the probe finds the replica current
    with replica.read_scope():
        before = where()
        # Bookkeeping (a recall's log row) leaves the request's reads on the replica.
        recall_log_create(
            actor=ACTOR,
            namespace=acme.namespace,
            entry=NewRecallLog(subject=None, memory_ids=[], purpose="recall"),
        )
        after_bookkeeping = where()
        remember(acme, FIRST)
        after_a_write = where()
    assert (before, after_bookkeeping, after_a_write) == (
        replica.REPLICA,
        replica.REPLICA,
        replica.PRIMARY,
    )


def test_a_job_reads_the_primary_until_the_replica_holds_what_queued_it(
    routed: Standby, acme: Tenant
) -> None:
    with routed.replay_paused():
        remember(acme, FIRST)  # the write that queues a job
        replica.job_started(task_id="job-1")
        try:
            in_the_job = replica.reading_from_replica(replica.read_alias)
        finally:
            replica.job_finished(task_id="job-1")
        with replica.read_scope():  # a request of another client, which wrote nothing
            in_a_request = replica.reading_from_replica(replica.read_alias)
    assert (in_the_job, in_a_request) == (replica.PRIMARY, replica.REPLICA)
