"""Backups and restores of the whole database, and the erasure ledger's replay.

A backup is a directory: the database (`pg_dump`, custom format), `manifest.json`, and with
a passphrase the keyring in escrow. It is written under a temporary name and renamed when
complete. A restore checks the backup, fills an empty database from it, migrates it
forward, verifies every audit chain and applies again every erasure of the ledger newer
than the backup, behind the restore marker (memoryhub/maintenance.py).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor

from apps.audit.actors import Actor
from apps.audit.selectors import audit_chain_verify
from apps.audit.services import audit_record
from apps.backups import escrow, manifest
from apps.backups.postgres import BackupError, program, run
from apps.memories.models import Memory, Subject
from apps.memories.row_encryption import KeyCache
from apps.memories.services import memories_purge_batch, subject_erase
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_delete
from apps.pipeline.models import Message
from apps.pipeline.summaries import session_summaries_forget
from apps.webhooks.services import deliveries_drop_erased
from memoryhub import erasure_ledger, maintenance
from memoryhub.row_security import ROLE_SQL

Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    return None


@dataclass(frozen=True)
class Backup:
    directory: Path
    manifest: dict[str, Any]


def backup_create(
    *, actor: Actor, directory: Path, passphrase: str | None = None, progress: Progress = _quiet
) -> Backup:
    """Write a backup into `directory` (new, or empty). With a passphrase, the keyring goes
    in too, sealed under it (never the KEK in clear)."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise BackupError(f"{directory}: exists and is not an empty directory")
    pg_dump = program("pg_dump")
    partial = directory.with_name(f".{directory.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        described = _write(partial, pg_dump, passphrase, progress)
        if directory.exists():
            directory.rmdir()
        partial.rename(directory)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)  # a failed backup leaves nothing behind
        raise
    _sync_folder(directory.parent)
    audit_record(
        actor=actor,
        action="backup.create",
        details={
            "files": described["files"],
            "erasure_ledger": described["erasure_ledger"],
            "keyring": passphrase is not None,
        },
    )
    return Backup(directory=directory, manifest=described)


def _write(
    partial: Path, pg_dump: Path, passphrase: str | None, progress: Progress
) -> dict[str, Any]:
    """The backup's files, the manifest last (synced); returns the manifest."""
    # The ledger's head before the dump's snapshot: every later erasure is replayed.
    described = manifest.describe(ledger_head=erasure_ledger.head())
    progress("Dumping the database (pg_dump, custom format)")
    dump = partial / manifest.DUMP
    run([str(pg_dump), "--format=custom", "--file", str(dump)], what="pg_dump")
    manifest.add_file(described, dump)
    if passphrase is not None:
        progress("Sealing the keyring under the passphrase")
        sealed = partial / manifest.KEYRING
        sealed.write_text(escrow.seal(settings.MEMORYHUB_KEK, passphrase).to_json())
        manifest.add_file(described, sealed)
    _write_synced(partial / manifest.NAME, _json(described))
    return described


def _json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _write_synced(path: Path, text: str) -> None:
    with path.open("w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    for name in os.listdir(path.parent):  # the dump and keyring too, before the rename
        with (path.parent / name).open("rb") as handle:
            os.fsync(handle.fileno())


def _sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@dataclass
class Restore:
    manifest: dict[str, Any]
    replay: Replay | None
    events_verified: int = 0
    migrated: list[str] = field(default_factory=list)


def backup_check(*, directory: Path) -> dict[str, Any]:
    """The backup's manifest, after checking everything a restore needs before it touches
    the database: the files and their checksums, the migrations, the KEK versions."""
    found = manifest.read(directory)
    if newer := manifest.unknown_migrations(found):
        raise BackupError(
            f"{directory / manifest.NAME}: the backup's database has migrations this code "
            f"does not know ({', '.join(newer[:3])}): it was made by a newer MemoryHub. "
            "Restore it with that version or newer."
        )
    missing = sorted(set(found["kek_versions"]) - set(settings.MEMORYHUB_KEYRING))
    if missing:
        hint = (
            f" The backup holds its keyring: `manage.py kek import {directory / manifest.KEYRING}`."
            if manifest.KEYRING in found["files"]
            else " Import it from your escrow: `manage.py kek import FILE`."
        )
        raise BackupError(
            f"{directory / manifest.DUMP}: its data keys are wrapped under KEK version(s) "
            f"{', '.join(map(str, missing))}, which MEMORYHUB_KEK lacks; nothing could be "
            f"decrypted.{hint}"
        )
    return found


def database_is_empty() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')"
        )
        (tables,) = cursor.fetchone()
    return tables == 0


def backup_restore(
    *,
    actor: Actor,
    directory: Path,
    force: bool = False,
    without_ledger: bool = False,
    progress: Progress = _quiet,
) -> Restore:
    """Restore a backup into the configured database (empty, or emptied with `force`), then
    migrate, verify the audit chains and replay the erasure ledger, behind the marker."""
    found = backup_check(directory=directory)
    ledger_head = erasure_ledger.Head(**found["erasure_ledger"])
    if not without_ledger:
        _ledger_matches(ledger_head)
    if not database_is_empty() and not force:
        raise BackupError(
            f"The database {connection.settings_dict['NAME']} is not empty: restore goes into "
            "an empty database (--force empties this one first)."
        )
    pg_restore = program("pg_restore")
    with maintenance.restore_marker():
        progress("Emptying the database" if force else "Preparing the database")
        _prepare(empty_first=force)
        progress("Restoring the database (pg_restore)")
        run(
            [str(pg_restore), "--no-owner", "--no-privileges", "--exit-on-error",
             "--single-transaction", "--dbname", connection.settings_dict["NAME"],
             str(directory / manifest.DUMP)],
            what="pg_restore",
        )  # fmt: skip
        with connection.cursor() as cursor:
            cursor.execute(ROLE_SQL)  # the tenant role's grants, which the dump leaves out
        restored = Restore(manifest=found, replay=None)
        restored.migrated = _migrate(progress)
        restored.events_verified = _verify_chains(progress)
        if without_ledger:
            progress("Not replaying the erasure ledger (--without-ledger)")
        else:
            progress("Replaying the erasure ledger")
            restored.replay = erasures_reapply(actor=actor, after=ledger_head, progress=progress)
        _record_restore(actor, directory, restored, without_ledger)
    return restored


def _ledger_matches(head: erasure_ledger.Head) -> None:
    folder = erasure_ledger.directory()
    if not (folder / erasure_ledger.FILENAME).exists() and head.seq == 0:
        return  # nothing was ever erased, before or after the backup
    if not (folder / erasure_ledger.FILENAME).exists():
        raise BackupError(
            f"The erasure ledger ({folder}) is missing, and the backup was taken at its entry "
            f"{head.seq}: restoring without it could bring back people who were erased. "
            "Restore the ledger from its own storage, or pass --without-ledger (recorded in "
            "the audit log)."
        )
    try:
        erasure_ledger.since(head)
    except erasure_ledger.LedgerBroken as error:
        raise BackupError(f"The erasure ledger ({folder}): {error}.") from None


def _prepare(*, empty_first: bool) -> None:
    """What a dump does not carry: the tenant role. `empty_first` drops everything first."""
    with connection.cursor() as cursor:
        if empty_first:
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
        cursor.execute(ROLE_SQL)


def _migrate(progress: Progress) -> list[str]:
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    pending = [f"{migration.app_label}.{migration.name}" for migration, _ in plan]
    if pending:
        progress(f"Migrating forward: {len(pending)} migration(s)")
        call_command("migrate", interactive=False, verbosity=0)
    return pending


def _verify_chains(progress: Progress) -> int:
    progress("Verifying every audit chain")
    checked, broken = audit_chain_verify(None)
    if broken is not None:
        raise BackupError(
            f"The restored audit log is broken at event {broken.event_id} (chain "
            f"{broken.chain}): {broken.reason}. The restore marker stays: nothing serves this "
            "database until a restore completes."
        )
    return checked


def _record_restore(actor: Actor, directory: Path, restored: Restore, without: bool) -> None:
    replay = restored.replay
    audit_record(
        actor=actor,
        action="backup.restore",
        details={
            "backup": directory.name,
            "manifest_sha256": manifest.sha256_of(directory / manifest.NAME),
            "migrated": len(restored.migrated),
            "audit_events_verified": restored.events_verified,
            "without_ledger": without,
            "erasures_checked": replay.checked if replay else 0,
            "erasures_replayed": replay.replayed if replay else 0,
            "webhook_deliveries_dropped": replay.webhook_deliveries_dropped if replay else 0,
        },
    )


@dataclass
class Replay:
    checked: int = 0
    replayed: int = 0
    webhook_deliveries_dropped: int = 0


def erasures_reapply(
    *, actor: Actor, after: erasure_ledger.Head | None = None, progress: Progress = _quiet
) -> Replay:
    """Apply again every ledger entry after `after` (all of them without it), and those
    within the overlap before it: the data keys destroyed, the rows deleted, a receipt
    written. Idempotent: an entry whose rows are gone is counted as checked only.

    Each erasure applied again emits `subject.erased` to the namespace's webhooks anew
    (receivers are idempotent), and the restored outbox's undelivered events about that
    subject are dropped (apps/webhooks: deliveries_drop_erased)."""
    entries = erasure_ledger.since(
        after or erasure_ledger.Head(),
        overlap_seconds=settings.MEMORYHUB_ERASURE_LEDGER_OVERLAP,
    )
    replay = Replay(checked=len(entries))
    fingerprints: dict[int, dict[str, Subject]] = {}
    for number, entry in enumerate(entries, start=1):
        erased: list[Subject] = []
        if _apply(actor, entry, fingerprints, erased):
            replay.replayed += 1
        for subject in erased:
            replay.webhook_deliveries_dropped += deliveries_drop_erased(
                namespace_id=subject.namespace_id, subject_ids=[subject.pk]
            )
        if number % 100 == 0:
            progress(f"  {number} of {len(entries)} ledger entries checked")
    progress(f"  {replay.replayed} erasure(s) applied again, of {replay.checked} checked")
    return replay


def _apply(
    actor: Actor,
    entry: erasure_ledger.Entry,
    fingerprints: dict[int, dict[str, Subject]],
    erased: list[Subject],
) -> bool:
    """Apply one entry again; whether it found anything to erase (the subjects it erased
    are added to `erased`)."""
    namespace = Namespace.objects.filter(pk=entry.namespace_id).first()
    if namespace is None:
        return False
    if entry.scope == "namespace":
        namespace_delete(actor=actor, namespace=namespace)
        return True
    if entry.scope == "subject":
        if entry.namespace_id not in fingerprints:
            fingerprints[entry.namespace_id] = _subjects_by_fingerprint(namespace)
        subject = fingerprints[entry.namespace_id].pop(entry.subject, None)
        if subject is None:
            return False
        subject_erase(actor=actor, subject=subject, via="restore")
        erased.append(subject)
        return True
    if entry.scope == "turns":
        return _forget_turns(namespace, [uuid.UUID(i) for i in entry.turn_ids])
    ids = [uuid.UUID(i) for i in entry.memory_ids]
    present = list(
        Memory.objects.filter(namespace=namespace, pk__in=ids).values_list("pk", flat=True)
    )
    if present:
        with transaction.atomic():
            counts = memories_purge_batch(namespace=namespace, ids=present, via="restore")
            audit_record(
                actor=actor,
                action="memory.bulk_delete",
                namespace=namespace,
                object_type="memory",
                details={**counts, "by": "erasure ledger", "ledger_entry": entry.seq},
            )
    return bool(present)


def _forget_turns(namespace: Namespace, ids: list[uuid.UUID]) -> bool:
    """Delete these conversation turns (and the session summaries made from them)."""
    with transaction.atomic():
        turns = Message.objects.filter(namespace=namespace, pk__in=ids)
        if not turns.exists():
            return False
        session_summaries_forget(turns=turns.only("session", "position"))
        turns.delete()
    return True


def _subjects_by_fingerprint(namespace: Namespace) -> dict[str, Subject]:
    """The namespace's subjects by their receipts' fingerprint (HMAC of the external id)."""
    keys = KeyCache()
    subjects = Subject.objects.filter(namespace=namespace).select_related("namespace")
    return {keys.subject_fingerprint(namespace.pk, s.external_id): s for s in subjects}
