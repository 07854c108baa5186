"""Inspect, start or stop the embedded PostgreSQL (only when DATABASE_URL is unset)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import embedded_db


class Command(BaseCommand):
    help = "Show the status of the embedded PostgreSQL, start it, or stop it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["status", "start", "stop"])

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if not settings.EMBEDDED_DATABASE:
            raise CommandError("DATABASE_URL is set: there is no embedded database to manage.")
        data_dir = Path(settings.DATA_DIR)
        if action == "start":
            server = embedded_db.ensure_server(data_dir)
            self.stdout.write(f"running, socket in {server.socket_dir}")
        elif action == "stop":
            stopped = embedded_db.stop_server(data_dir)
            self.stdout.write("stopped" if stopped else "was not running")
        else:
            self.stdout.write(json.dumps(embedded_db.server_status(data_dir)))
