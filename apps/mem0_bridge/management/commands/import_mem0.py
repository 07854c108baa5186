from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.mem0_bridge import oss
from apps.mem0_bridge.progress import ProgressBar
from apps.mem0_bridge.records import BadRecord, Record, record_of, records_of_export
from apps.mem0_bridge.services import ImportReport, mem0_records_import
from apps.namespaces.models import Namespace
from memoryhub.json_input import JsonInputError, json_loads


class Command(BaseCommand):
    help = (
        "Import Mem0's memories into a namespace, through MemoryHub's own write path "
        "(encrypted, screened by the namespace's PII policy, embedded with its models, "
        "deduplicated, audited): from the JSON Mem0's platform returns for get_all "
        "(--export), or from a self-hosted Mem0 store read through the mem0ai package "
        "(--oss, a JSON file holding Mem0's configuration). Run again, it imports only what "
        "it has not imported before. --dry-run says what would be imported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--namespace", required=True, help="the namespace's slug")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--export", type=Path, help="a JSON file of Mem0's get_all answer")
        source.add_argument("--oss", type=Path, help="a JSON file of Mem0's store configuration")
        parser.add_argument("--dry-run", action="store_true", help="store nothing; report")

    def handle(
        self,
        *args: Any,
        namespace: str,
        export: Path | None,
        oss: Path | None,
        dry_run: bool,
        **options: Any,
    ) -> None:
        target = Namespace.objects.filter(slug=namespace).first()
        if target is None:
            raise CommandError(f"No namespace {namespace!r}.")
        if export is not None:
            records, source = _export_records(export), "mem0-export"
        else:
            assert oss is not None  # one of the two is required
            records, source = _store_records(oss), "mem0-oss"
        bar = ProgressBar(
            total=len(records),
            write=lambda text: self.stderr.write(text, ending=""),
            interactive=self.stderr.isatty(),
            label="Importing",
        )
        report = mem0_records_import(
            actor=Actor.system("manage.py import_mem0"),
            namespace=target,
            records=records,
            source=source,
            dry_run=dry_run,
            progress=bar.advance,
        )
        bar.close()
        self.summarize(report)

    def summarize(self, report: ImportReport) -> None:
        for bad in report.bad:
            self.stderr.write(f"Skipped {bad.record_id or '(no id)'}: {bad.reason}")
        pii = ", ".join(f"{kind} x{n}" for kind, n in sorted(report.pii.items())) or "none"
        verb = "Would import" if report.dry_run else "Imported"
        self.stdout.write(
            f"{verb} {report.imported} memories ({report.versions} versions) about "
            f"{len(report.subjects)} subjects ({len(report.new_subjects)} new). "
            f"Read {report.read}; already imported {report.already_imported}; duplicates "
            f"{report.duplicates}; skipped {len(report.bad)}; PII found: {pii}."
        )
        if report.dry_run:
            self.stdout.write("Dry run: nothing was stored.")


def _read_json(path: Path) -> Any:
    try:
        return json_loads(path.read_bytes())
    except OSError as error:
        raise CommandError(f"Cannot read {path}: {error.strerror}.") from None
    except JsonInputError as error:
        raise CommandError(f"{path} is not JSON MemoryHub accepts: {error}") from None


def _export_records(path: Path) -> list[Record | BadRecord]:
    data = _read_json(path)
    try:
        raws = list(records_of_export(data))
    except ValueError as error:
        raise CommandError(f"{path}: {error}.") from None
    return list(_parsed(raws))


def _parsed(raws: list[Any]) -> Iterator[Record | BadRecord]:
    for raw in raws:
        try:
            yield record_of(raw)
        except BadRecord as bad:
            yield bad


def _store_records(path: Path) -> list[Record | BadRecord]:
    config = _read_json(path)
    if not isinstance(config, dict):
        raise CommandError(f"{path}: Mem0's configuration is a JSON object.")
    try:
        memory = oss.open_store(config)
    except oss.Mem0Missing as error:
        raise CommandError(str(error)) from None
    try:
        return oss.store_records(memory)
    finally:
        close = getattr(memory, "close", None)
        if callable(close):
            close()
