"""What a restore refuses before it changes anything (a killed, truncated or tampered backup,
a database that is not empty, a missing ledger or KEK), and the key escrow's round trip.

They run PostgreSQL's own dump and restore programs (processes lane)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.db import connection

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.backups import manifest
from apps.backups.postgres import BackupError
from apps.backups.services import backup_create, backup_restore
from apps.memories.models import DataKey, Memory, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import data_keys_rotate
from apps.pipeline.models import Message
from apps.privacy.services import memories_forget
from memoryhub.secrets_store import new_kek, parse_keyring
from tests.conftest import PROJECT_ROOT, Tenant
from tests.privacy.conftest import tell

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

ACTOR = Actor.system("tests")
PASSPHRASE = "a passphrase for the tests"


@pytest.fixture
def places(tmp_path: Path, settings: Any) -> Path:
    settings.MEMORYHUB_ERASURE_LEDGER = tmp_path / "ledger"
    settings.DATA_DIR = tmp_path / "data"
    return tmp_path


def remember(tenant: Tenant, content: str, subject: str = "person-1") -> str:
    response = tenant.client.post(
        tenant.url("memories"), {"subject": subject, "content": content}, format="json"
    )
    assert response.status_code == 201, response.json()
    return str(response.json()["id"])


def state() -> tuple[int, int, int]:
    return Memory.objects.count(), DataKey.objects.count(), AuditEvent.objects.count()


def test_a_killed_backup_leaves_nothing_restore_accepts(places: Path, acme: Tenant) -> None:
    remember(acme, "Likes green tea")
    params = connection.settings_dict
    host = quote(str(params["HOST"]), safe="")
    env = {
        **{k: v for k, v in os.environ.items() if k not in {"CELERY_BROKER_URL"}},
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
        "DATABASE_URL": f"postgres://{params['USER']}@{host}:{params['PORT']}/{params['NAME']}",
        "DEBUG": "1",
        "MEMORYHUB_DATA_DIR": str(places / "data"),
        "MEMORYHUB_KEK": django_settings.MEMORYHUB_KEK,
        "MEMORYHUB_ERASURE_LEDGER": str(places / "ledger"),
    }
    target = places / "nightly"
    process = subprocess.Popen(
        [sys.executable, "manage.py", "backup", str(target)],
        cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    partial: list[Path] = []
    while not partial and process.poll() is None and time.monotonic() < deadline:
        partial = list(places.glob(".nightly.partial-*"))
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert partial, "the backup finished (or never began) before it could be killed"
    assert not target.exists()
    before = state()
    for directory in (target, partial[0]):
        with pytest.raises(BackupError, match=r"no such backup directory|manifest\.json: missing"):
            backup_restore(actor=ACTOR, directory=directory, force=True)
    assert state() == before


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        ("truncate", r"database\.dump: \d+ bytes where the manifest says \d+"),
        ("flip", r"database\.dump: its SHA-256 differs"),
        ("manifest", r"manifest\.json: not a MemoryHub backup manifest"),
    ],
)
def test_a_damaged_backup_is_refused_naming_the_file_and_nothing_changes(
    places: Path, acme: Tenant, damage: str, reason: str
) -> None:
    remember(acme, "Likes green tea")
    backup = backup_create(actor=ACTOR, directory=places / "backup")
    dump = backup.directory / manifest.DUMP
    data = dump.read_bytes()
    if damage == "truncate":
        dump.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        dump.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    else:
        (backup.directory / manifest.NAME).write_text('{"format": ')
    remember(acme, "Moved to Porto")
    before = state()
    with pytest.raises(BackupError, match=reason):
        backup_restore(actor=ACTOR, directory=backup.directory, force=True)
    assert state() == before


def test_a_restore_needs_an_empty_database_or_force(places: Path, acme: Tenant) -> None:
    remember(acme, "Likes green tea")
    backup = backup_create(actor=ACTOR, directory=places / "backup")
    later = remember(acme, "Moved to Porto")
    with pytest.raises(BackupError, match="is not empty"):
        backup_restore(actor=ACTOR, directory=backup.directory)
    assert Memory.objects.filter(pk=later).exists()
    backup_restore(actor=ACTOR, directory=backup.directory, force=True)
    assert not Memory.objects.filter(pk=later).exists()
    assert Memory.objects.count() == 1


def test_without_its_ledger_a_restore_refuses_unless_told_and_says_so(
    places: Path, acme: Tenant
) -> None:
    remember(acme, "Likes green tea", subject="leaving")
    remember(acme, "Likes tea", subject="staying")
    response = acme.client.post(acme.url("subjects/leaving/erase"))
    assert response.status_code == 200
    backup = backup_create(actor=ACTOR, directory=places / "backup")
    (places / "ledger" / "ledger.jsonl").rename(places / "elsewhere.jsonl")
    with pytest.raises(BackupError, match=r"erasure ledger .* is missing"):
        backup_restore(actor=ACTOR, directory=backup.directory, force=True)
    restored = backup_restore(
        actor=ACTOR, directory=backup.directory, force=True, without_ledger=True
    )
    assert restored.replay is None
    event = AuditEvent.objects.get(action="backup.restore")
    assert event.details["without_ledger"] is True


def test_a_rotated_kek_restores_with_the_escrowed_keyring(
    places: Path, acme: Tenant, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = remember(acme, "Likes green tea")
    backup = backup_create(actor=ACTOR, directory=places / "backup", passphrase=PASSPHRASE)
    old_ring = dict(settings.MEMORYHUB_KEYRING)
    newest = max(old_ring) + 1
    new_entry = parse_keyring(new_kek().replace("1:", f"{newest}:", 1))
    settings.MEMORYHUB_KEYRING = {**old_ring, **new_entry}
    data_keys_rotate(actor=ACTOR)
    settings.MEMORYHUB_KEYRING = new_entry  # the old KEK retired, then lost
    with pytest.raises(
        BackupError, match=r"KEK version\(s\) 1, which MEMORYHUB_KEK lacks.*kek import"
    ):
        backup_restore(actor=ACTOR, directory=backup.directory, force=True)

    monkeypatch.delenv("MEMORYHUB_KEK", raising=False)
    monkeypatch.setenv("MEMORYHUB_ESCROW_PASSPHRASE", PASSPHRASE)
    call_command("kek", "import", str(backup.directory / manifest.KEYRING))
    imported = parse_keyring((places / "data" / "kek").read_text().strip())
    assert set(imported) == {*old_ring, newest}
    settings.MEMORYHUB_KEYRING = imported  # what the restarted processes read

    backup_restore(actor=ACTOR, directory=backup.directory, force=True)
    restored = Memory.objects.get(pk=memory_id)
    assert open_memory(KeyCache(), restored) == "Likes green tea"


def test_the_escrow_opens_only_with_its_passphrase(
    places: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = places / "kek.escrow"
    monkeypatch.setenv("MEMORYHUB_ESCROW_PASSPHRASE", PASSPHRASE)
    call_command("kek", "export", "--out", str(out))
    assert django_settings.MEMORYHUB_KEK.split(",")[0].split(":")[1] not in out.read_text()
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    monkeypatch.setenv("MEMORYHUB_ESCROW_PASSPHRASE", "another passphrase")
    with pytest.raises(CommandError, match="passphrase is wrong"):
        call_command("kek", "import", str(out))


def test_a_pg_dump_older_than_the_server_is_refused_saying_so(
    places: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = Path("/usr/lib/postgresql/15/bin")  # Debian's client, beside the wheel's server
    if not (older / "pg_dump").exists():
        pytest.skip("Debian's PostgreSQL 15 client is not installed here")
    monkeypatch.setenv("MEMORYHUB_PG_BIN", str(older))
    with pytest.raises(BackupError, match=r"is PostgreSQL 15, older than the server \(18\)"):
        backup_create(actor=ACTOR, directory=places / "backup")
    assert not (places / "backup").exists()
    assert not list(places.glob(".backup.partial-*"))


def test_a_forgotten_turn_stays_forgotten_across_a_restore(
    places: Path, acme: Tenant, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        tell(acme, "u1", "I live in Hangzhou.", "My sister is called Mei.")
    backup = backup_create(actor=ACTOR, directory=places / "backup")
    subject = Subject.objects.get(namespace=acme.namespace, external_id="u1")
    turn_memory = Memory.objects.filter(subject=subject, kind="episodic").first()
    assert turn_memory is not None
    turn_id = turn_memory.source["message"]
    assert Message.objects.filter(pk=turn_id).exists()
    assert memories_forget(actor=ACTOR, subject=subject, ids=[turn_memory.pk]) == 1

    restored = backup_restore(actor=ACTOR, directory=backup.directory, force=True)

    assert restored.replay is not None
    assert restored.replay.replayed == 2  # the memory, and its turn
    assert not Memory.objects.filter(pk=turn_memory.pk).exists()
    assert not Message.objects.filter(pk=turn_id).exists()
    assert Message.objects.filter(session__subject__external_id="u1").count() == 1
