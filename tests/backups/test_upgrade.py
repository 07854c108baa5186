"""Upgrades: a backup made by an earlier release (tests/backups/fixtures, regenerated at each
release by tools/upgrade_fixture.py) restores with the current code, migrates to head, and
everything in it still decrypts, recalls and verifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.audit.actors import Actor
from apps.audit.selectors import audit_chain_verify
from apps.backups import escrow, manifest
from apps.backups.services import backup_restore
from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_memory
from apps.namespaces.models import Namespace
from memoryhub.secrets_store import parse_keyring
from tests.conftest import ALL_PERMISSIONS, api_client, make_api_key

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

FIXTURES = Path(__file__).parent / "fixtures"
PASSPHRASE = "memoryhub upgrade fixture"  # tools/upgrade_fixture.py
RELEASES = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())


def test_there_is_a_fixture_and_it_is_small() -> None:
    assert RELEASES
    for name in RELEASES:
        size = sum(path.stat().st_size for path in (FIXTURES / name).iterdir())
        assert size < 5 * 1_048_576, name


@pytest.mark.parametrize("release", RELEASES)
def test_a_backup_of_an_earlier_release_restores_migrates_and_works(
    release: str, tmp_path: Path, settings: Any
) -> None:
    settings.MEMORYHUB_ERASURE_LEDGER = tmp_path / "ledger"
    settings.DATA_DIR = tmp_path / "data"
    folder = FIXTURES / release
    sealed = escrow.Escrow.from_json((folder / manifest.KEYRING).read_text())
    settings.MEMORYHUB_KEYRING = {
        **settings.MEMORYHUB_KEYRING,
        **parse_keyring(escrow.open_escrow(sealed, PASSPHRASE)),
    }

    restored = backup_restore(actor=Actor.system("tests"), directory=folder, force=True)

    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []  # at head
    assert restored.events_verified > 0
    assert audit_chain_verify(None)[1] is None
    memories = list(Memory.objects.all())
    assert len(memories) >= 50
    keys = KeyCache()
    texts = [open_memory(keys, memory) for memory in memories]
    assert all(texts)
    namespace = Namespace.objects.get(slug="demo")
    client = api_client(make_api_key([namespace], ALL_PERMISSIONS))
    person = next(m for m in memories if m.subject_id is not None).subject.external_id
    response = client.post(
        "/api/v1/namespaces/demo/recall",
        {"subject": person, "query": "what does the user like to eat"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json()["results"]
