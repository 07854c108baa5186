"""MemoryHub's PostgreSQL backend (memoryhub/postgres_backend), pointed at the embedded
server, which it starts on demand.

The server is started on the first connection, not when settings load: commands that need
no database (`check`, `collectstatic`, a Celery worker that has not touched a model yet)
never start it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memoryhub import embedded_db
from memoryhub.postgres_backend import base as postgresql


class DatabaseWrapper(postgresql.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        data_dir = Path(self.settings_dict["EMBEDDED_DATA_DIR"])
        if not self.settings_dict.get("HOST"):
            server = embedded_db.ensure_server(data_dir)
            # Written back so `dbshell` and test-database creation see the same socket.
            self.settings_dict["HOST"] = str(server.socket_dir)
            self.settings_dict["PORT"] = str(server.port)
        return super().get_connection_params()
