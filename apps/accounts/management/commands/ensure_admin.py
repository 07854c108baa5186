"""Create a first admin account if there is none, and say how to log in.

Used by `make run`. The generated password is printed once and kept in the data directory
(0600) so a quickstart user who missed it can find it; change it after the first login.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from memoryhub.secrets_store import read_or_create


class Command(BaseCommand):
    help = "Create an admin account if none exists and print how to log in."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--url", default="http://127.0.0.1:8000/")

    def handle(self, *args: Any, username: str, url: str, **options: Any) -> None:
        User = get_user_model()
        password_file = Path(settings.DATA_DIR) / "initial_admin_password"
        if User.objects.filter(is_superuser=True).exists():
            self.stdout.write(f"Log in at {url} with your admin account.")
            if password_file.exists():
                self.stdout.write(
                    f"The password generated at set-up is in {password_file} "
                    "(delete that file once you have changed it)."
                )
            return
        password = read_or_create(password_file, lambda: secrets.token_urlsafe(12), announce=False)
        User.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(
            self.style.SUCCESS(f"Created the admin account. Log in at {url} as")
            + f"\n  username: {username}\n  password: {password}\n"
            + f"(also kept in {password_file}; change it after the first login)"
        )
