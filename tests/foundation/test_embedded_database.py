import json
from pathlib import Path

import pytest
from django.db import connection

from memoryhub import embedded_db
from tests.conftest import run_python

WRITE_A_ROW = """
import sys
from pathlib import Path
import psycopg
from memoryhub import embedded_db
server = embedded_db.ensure_server(Path(sys.argv[1] if len(sys.argv) > 1 else {data_dir!r}))
with psycopg.connect(**server.connection_kwargs()) as conn:
    conn.execute("SELECT pg_advisory_xact_lock(42)")  # CREATE TABLE IF NOT EXISTS races
    conn.execute("CREATE TABLE IF NOT EXISTS marks (writer text)")
    conn.execute("INSERT INTO marks VALUES (%s)", [{writer!r}])
"""

READ_ROWS = """
from pathlib import Path
import json, psycopg
from memoryhub import embedded_db
server = embedded_db.ensure_server(Path({data_dir!r}))
with psycopg.connect(**server.connection_kwargs()) as conn:
    print(json.dumps(sorted(r[0] for r in conn.execute("SELECT writer FROM marks"))))
"""


@pytest.mark.django_db
def test_the_test_database_has_pgvector_0_8_or_newer() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
    assert tuple(int(part) for part in version.split(".")[:2]) >= (0, 8)


@pytest.mark.django_db
def test_the_default_database_is_the_embedded_postgresql_18() -> None:
    assert connection.vendor == "postgresql"
    assert connection.pg_version >= 180000


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_processes_share_one_server_and_data_survives_a_restart(project_scratch_dir: Path) -> None:
    data_dir = str(project_scratch_dir)
    import subprocess
    import sys

    from tests.conftest import PROJECT_ROOT

    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITE_A_ROW.format(data_dir=data_dir, writer=name)],
            cwd=PROJECT_ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("web", "worker")
    ]
    for writer in writers:
        _, stderr = writer.communicate(timeout=120)
        assert writer.returncode == 0, stderr

    # The last process to leave stopped the server; the next one starts it on the same data.
    assert embedded_db.server_status(project_scratch_dir)["running"] is False
    result = run_python(READ_ROWS.format(data_dir=data_dir))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["web", "worker"]
    assert embedded_db.server_status(project_scratch_dir)["running"] is False


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_a_killed_process_does_not_keep_the_server_alive(project_scratch_dir: Path) -> None:
    data_dir = str(project_scratch_dir)
    killed = run_python(
        WRITE_A_ROW.format(data_dir=data_dir, writer="doomed") + "\nimport os; os._exit(0)"
    )
    assert killed.returncode == 0, killed.stderr
    # os._exit skips the goodbye: the server still runs with a dead handle registered.
    assert embedded_db.server_status(project_scratch_dir)["running"] is True
    result = run_python(READ_ROWS.format(data_dir=data_dir))
    assert json.loads(result.stdout) == ["doomed"]
    assert embedded_db.server_status(project_scratch_dir)["running"] is False
