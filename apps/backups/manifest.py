"""A backup's manifest: what the backup holds and how to check it.

`manifest.json` names MemoryHub's version, the migrations applied, each audit chain's head,
the embedding models of the stored vectors, the KEK versions that wrap the data keys, the
erasure ledger's head when the backup began, and the size and SHA-256 of every other file.
It is written last: a directory without it is not a backup.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path
from typing import Any

from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.models import Count

from apps.audit.selectors import chain_heads
from apps.backups.postgres import BackupError
from apps.memories.models import DataKey, Memory
from memoryhub import erasure_ledger
from memoryhub.json_input import json_loads

FORMAT = "memoryhub-backup/1"
NAME = "manifest.json"
DUMP = "database.dump"
KEYRING = "keyring.escrow"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def describe(*, ledger_head: erasure_ledger.Head) -> dict[str, Any]:
    """The manifest's account of the database now (files are added once written)."""
    applied = MigrationLoader(connection, ignore_no_migrations=True).applied_migrations
    models: dict[str, dict[str, int]] = {"primary": {}, "multilingual": {}}
    for column, field in (("primary", "embedding_model"), ("multilingual", "multilingual_model")):
        counted = Memory.objects.exclude(**{field: ""}).values(field).annotate(n=Count("pk"))
        models[column] = {row[field]: row["n"] for row in counted.order_by(field)}
    return {
        "format": FORMAT,
        "memoryhub_version": metadata.version("memoryhub"),
        "postgresql": connection.pg_version,  # type: ignore[attr-defined]
        "migrations": sorted(f"{app}.{name}" for app, name in applied),
        "audit_chains": {
            str(head.key): {"slug": head.slug or "", "event": head.last_id, "hash": head.last_hash}
            for head in chain_heads()
        },
        "embedding_models": models,
        "kek_versions": sorted(set(DataKey.objects.values_list("kek_version", flat=True))),
        "erasure_ledger": ledger_head.as_dict(),
        "files": {},
    }


def add_file(manifest: dict[str, Any], path: Path) -> None:
    manifest["files"][path.name] = {"bytes": path.stat().st_size, "sha256": sha256_of(path)}


def read(directory: Path) -> dict[str, Any]:
    """The manifest, with every file it lists checked; BackupError names the file and why."""
    path = directory / NAME
    if not directory.is_dir():
        raise BackupError(f"{directory}: no such backup directory")
    if not path.is_file():
        raise BackupError(
            f"{path}: missing. A backup writes its manifest last; without it the backup is "
            "incomplete (interrupted?) and cannot be restored."
        )
    try:
        manifest = json_loads(path.read_text())
        files = dict(manifest["files"])
    except (ValueError, KeyError, TypeError):
        raise BackupError(f"{path}: not a MemoryHub backup manifest (unreadable)") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{path}: format {manifest.get('format')!r}, expected {FORMAT!r}")
    if DUMP not in files:
        raise BackupError(f"{path}: lists no {DUMP}")
    for name, expected in files.items():
        _check_file(directory / name, expected)
    return manifest


def _check_file(path: Path, expected: dict[str, Any]) -> None:
    if not path.is_file():
        raise BackupError(f"{path}: missing")
    size = path.stat().st_size
    if size != expected.get("bytes"):
        raise BackupError(
            f"{path}: {size} bytes where the manifest says {expected.get('bytes')} (truncated?)"
        )
    if sha256_of(path) != expected.get("sha256"):
        raise BackupError(f"{path}: its SHA-256 differs from the manifest's (changed?)")


def unknown_migrations(manifest: dict[str, Any]) -> list[str]:
    """Migrations the backup's database had that this code does not know: it was made by
    newer code, and restoring it here would run old code on a newer schema."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    known = {f"{app}.{name}" for app, name in loader.disk_migrations}
    return [name for name in manifest.get("migrations", []) if name not in known]
