"""`manage.py backup DIR`: the database, a manifest, and with --with-keyring the keyring
sealed under a passphrase (docs/production.md, Backups)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.backups.management.commands._passphrase import passphrase
from apps.backups.services import backup_create
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = "Back up the database into DIR (new or empty): a pg_dump, a manifest with checksums."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path, metavar="DIR")
        parser.add_argument(
            "--with-keyring",
            action="store_true",
            help="also write the keyring, encrypted under a passphrase "
            "(MEMORYHUB_ESCROW_PASSPHRASE, or asked for)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        secret = passphrase(confirm=True) if options["with_keyring"] else None
        try:
            backup = backup_create(
                actor=Actor.system("manage.py backup"),
                directory=options["directory"].resolve(),
                passphrase=secret,
                progress=self.stdout.write,
            )
        except ApplicationError as error:
            raise CommandError(error.message) from None
        files = backup.manifest["files"]
        size = sum(entry["bytes"] for entry in files.values())
        self.stdout.write(
            self.style.SUCCESS(
                f"Backup written to {backup.directory}: {', '.join(sorted(files))} "
                f"({size / 1_048_576:.1f} MB), erasure ledger at entry "
                f"{backup.manifest['erasure_ledger']['seq']}."
            )
        )
