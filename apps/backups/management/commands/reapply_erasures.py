"""`manage.py reapply_erasures`: after a recovery made by other tools (WAL archives, a
managed service's snapshot), apply again the erasures of the ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.backups import manifest
from apps.backups.services import erasures_reapply
from memoryhub import erasure_ledger, maintenance
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = (
        "Apply again the erasure ledger's entries (all of them, or those newer than a "
        "backup's manifest): idempotent, for a database recovered by other tools."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--backup",
            type=Path,
            metavar="DIR",
            help="only the entries newer than this backup's ledger head (and the overlap)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        after = erasure_ledger.Head()
        actor = Actor.system("manage.py reapply_erasures")
        try:
            if options["backup"]:
                after = erasure_ledger.Head(**manifest.read(options["backup"])["erasure_ledger"])
            with maintenance.restore_marker():
                replay = erasures_reapply(actor=actor, after=after, progress=self.stdout.write)
                audit_record(
                    actor=actor,
                    action="backup.erasures_reapplied",
                    details={"checked": replay.checked, "replayed": replay.replayed},
                )
        except (ApplicationError, erasure_ledger.LedgerBroken) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"{replay.replayed} erasure(s) applied again; {replay.checked} entries checked."
            )
        )
