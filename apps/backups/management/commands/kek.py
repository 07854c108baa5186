"""`manage.py kek export --out FILE` and `kek import FILE`: the keyring in escrow, sealed under
a passphrase (docs/production.md, Key escrow)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.backups import escrow
from apps.backups.management.commands._passphrase import passphrase
from memoryhub.secrets_store import parse_keyring


def keyring_text(ring: dict[int, bytes]) -> str:
    return ",".join(f"{v}:{base64.b64encode(ring[v]).decode()}" for v in sorted(ring))


class Command(BaseCommand):
    help = "Export the keyring (MEMORYHUB_KEK) sealed under a passphrase, or import one."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        export = actions.add_parser("export", help="write the keyring, sealed, to FILE")
        export.add_argument("--out", type=Path, required=True, metavar="FILE")
        imported = actions.add_parser(
            "import",
            help="add a sealed keyring's versions to the configured one (var/kek), or print "
            "the value for MEMORYHUB_KEK where the environment sets it",
        )
        imported.add_argument("file", type=Path, metavar="FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "export":
            self._export(options["out"])
        else:
            self._import(options["file"])

    def _export(self, out: Path) -> None:
        if out.exists():
            raise CommandError(f"{out} exists: choose a new file.")
        sealed = escrow.seal(settings.MEMORYHUB_KEK, passphrase(confirm=True))
        descriptor = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(sealed.to_json())
        versions = ", ".join(map(str, sorted(settings.MEMORYHUB_KEYRING)))
        self.stdout.write(
            self.style.SUCCESS(
                f"Keyring (KEK versions {versions}) written to {out}, sealed under the "
                "passphrase. Keep it apart from the backups and the passphrase apart from both."
            )
        )

    def _import(self, path: Path) -> None:
        try:
            sealed = escrow.Escrow.from_json(path.read_text())
            ring = parse_keyring(escrow.open_escrow(sealed, passphrase(confirm=False)))
        except (OSError, ValueError) as error:
            raise CommandError(f"{path}: {error}") from None
        current = dict(settings.MEMORYHUB_KEYRING)
        clash = [v for v in ring if v in current and current[v] != ring[v]]
        if clash:
            raise CommandError(
                f"{path}: KEK version(s) {', '.join(map(str, clash))} differ from the configured "
                "ones of the same version; nothing was changed."
            )
        merged = keyring_text({**current, **ring})
        if os.environ.get("MEMORYHUB_KEK"):
            self.stdout.write(
                "MEMORYHUB_KEK comes from the environment: set it to this value (it holds "
                "the configured versions and the imported ones):"
            )
            self.stdout.write(merged)
            return
        target = Path(settings.DATA_DIR) / "kek"
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".kek.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(merged + "\n")
        temporary.replace(target)
        added = sorted(set(ring) - set(current))
        self.stdout.write(
            self.style.SUCCESS(
                f"{target} now holds KEK versions {', '.join(map(str, sorted({*current, *ring})))}"
                f" ({len(added)} added). Restart MemoryHub's processes to use them."
            )
        )
