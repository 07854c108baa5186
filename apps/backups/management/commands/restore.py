"""`manage.py restore DIR`: into an empty database, then migrations, the audit chains'
verification and the erasure ledger's replay (docs/production.md, Restores)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.backups.services import backup_restore
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = (
        "Restore the backup in DIR into an empty database; migrate, verify the audit chains "
        "and apply again every erasure of the ledger newer than the backup."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path, metavar="DIR")
        parser.add_argument(
            "--force", action="store_true", help="empty a database that is not empty first"
        )
        parser.add_argument(
            "--without-ledger",
            action="store_true",
            help="finish without replaying the erasure ledger (recorded in the audit log)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            restored = backup_restore(
                actor=Actor.system("manage.py restore"),
                directory=options["directory"].resolve(),
                force=options["force"],
                without_ledger=options["without_ledger"],
                progress=self.stdout.write,
            )
        except ApplicationError as error:
            raise CommandError(error.message) from None
        replay = restored.replay
        replayed = (
            f"{replay.replayed} erasure(s) applied again ({replay.checked} ledger entries checked)"
            if replay
            else "the erasure ledger NOT replayed (--without-ledger)"
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Restored {options['directory']}: {len(restored.migrated)} migration(s) run, "
                f"{restored.events_verified} audit events verified, {replayed}."
            )
        )
