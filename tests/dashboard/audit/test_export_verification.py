"""The documented procedure (docs/protection.md, "Verifying an audit export without
MemoryHub") on a real export: the script is read from that page and run by a separate Python
with the standard library only. It accepts an intact export, names a tampered line, and tells
a filtered export's gaps from a break."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from apps.audit import chain
from apps.audit.services import audit_record
from tests.dashboard.audit.conftest import ACTOR, AuditCast, streamed

PROTECTION_DOC = Path(__file__).resolve().parents[3] / "docs" / "protection.md"


def documented_script() -> str:
    """The page's Python block: what a reader saves as verify_audit_export.py."""
    blocks = re.findall(
        r"^```python\n(.*?)^```", PROTECTION_DOC.read_text(), flags=re.DOTALL | re.MULTILINE
    )
    (script,) = [block for block in blocks if "FIELDS = (" in block]
    return script


def save_export(client: Client, path: Path, query: str = "") -> list[str]:
    response = client.get("/audit/export.jsonl" + query)
    assert response.status_code == 200
    content = streamed(response)
    path.write_bytes(content)
    return content.decode().splitlines()


def verify(path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    script = path.parent / "verify_audit_export.py"
    script.write_text(documented_script())
    return subprocess.run(
        [sys.executable, "-I", str(script), *flags, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def client(cast: AuditCast) -> Client:
    # Details with nesting, non-ASCII text and numbers: the serialization must match.
    audit_record(
        actor=ACTOR.__class__(type="user", id="9", name="李雷"),
        action="test.unicode",
        details={"z": [1, 2.5, {"b": "ü", "a": None}], "名字": "测试", "count": 3},
    )
    return cast.client("alice")


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_it_verifies_an_intact_export(client: Client, tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    lines = save_export(client, path)
    result = verify(path, "--complete")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == f"OK: {len(lines)} events, 0 broken"


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_it_names_a_tampered_line(client: Client, tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    lines = save_export(client, path)
    event = json.loads(lines[2])
    event["actor_name"] = "mallory"
    lines[2] = json.dumps(event, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = verify(path, "--complete")
    assert result.returncode == 1
    assert f"line 3, event {event['id']}: hash does not match its fields" in result.stdout
    assert result.stdout.strip().endswith(f"BROKEN: {len(lines)} events, 1 broken")


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_it_names_a_line_whose_hash_was_recomputed_after_tampering(
    client: Client, tmp_path: Path
) -> None:
    """A forger who also fixes the edited line's hash breaks the next line's link."""

    path = tmp_path / "export.jsonl"
    lines = save_export(client, path)
    event = json.loads(lines[2])
    event["details"] = {"forged": True}
    event["hash"] = chain.link_hash(event)
    lines[2] = json.dumps(event, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = verify(path, "--complete")
    assert result.returncode == 1
    following = json.loads(lines[3])["id"]
    assert f"line 4, event {following}: prev_hash is not the hash before" in result.stdout


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_it_names_a_removed_line_of_a_complete_export(client: Client, tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    lines = save_export(client, path)
    del lines[3]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = verify(path, "--complete")
    assert result.returncode == 1
    assert "prev_hash is not the hash before" in result.stdout


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_it_checks_each_event_of_a_filtered_export_and_reports_its_gaps(
    client: Client, tmp_path: Path
) -> None:
    path = tmp_path / "export.jsonl"
    lines = save_export(client, path, "?action=membership.set")
    assert len(lines) == 4
    result = verify(path)
    assert result.returncode == 0, result.stdout
    assert "the event before it is not in this export" in result.stdout
    assert result.stdout.strip().endswith("OK: 4 events, 0 broken")
    event = json.loads(lines[1])
    event["object_id"] = "user 999"
    lines[1] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tampered = verify(path)
    assert tampered.returncode == 1
    assert f"line 2, event {event['id']}: hash does not match its fields" in tampered.stdout
    assert verify(path, "--complete").returncode == 1


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_a_namespace_export_verifies_on_its_own_and_names_a_cut_out_event(
    cast: AuditCast, tmp_path: Path
) -> None:
    """Olive owns acme: her export of it is acme's chain alone, whole from its first event."""
    for n in range(3):
        audit_record(actor=ACTOR, action="test.acme", namespace=cast.acme, details={"n": n})
        audit_record(actor=ACTOR, action="test.globex", namespace=cast.globex)
    path = tmp_path / "acme.jsonl"
    lines = save_export(cast.client("olive"), path, "?namespace=acme")
    events = [json.loads(line) for line in lines]
    assert {event["chain"] for event in events} == {cast.acme.pk}
    assert events[0]["prev_hash"] == "0" * 64
    for flag in ("--namespace", "--complete"):
        result = verify(path, flag)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.strip() == f"OK: {len(lines)} events, 0 broken"
    del lines[2]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = verify(path, "--namespace")
    assert result.returncode == 1
    assert "prev_hash is not the hash before it in its chain" in result.stdout


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_a_chain_that_starts_after_the_seal_is_named_with_the_hash_it_continues(
    cast: AuditCast, tmp_path: Path
) -> None:
    path = tmp_path / "export.jsonl"
    lines = save_export(cast.client("olive"), path, "?namespace=acme")
    assert len(lines) >= 2
    first, second = json.loads(lines[0]), json.loads(lines[1])
    sealed = "ab" * 32
    first["prev_hash"] = sealed  # as if acme's chain had started after an older install's seal
    first["hash"] = chain.link_hash(first)
    second["prev_hash"] = first["hash"]
    second["hash"] = chain.link_hash(second)
    lines = [json.dumps(first, ensure_ascii=False), json.dumps(second, ensure_ascii=False)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = verify(path, "--namespace")
    assert result.returncode == 0, result.stdout
    assert f"chain {cast.acme.pk} starts after hash {sealed}" in result.stdout
