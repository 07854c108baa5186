"""One audit chain per namespace, and a global one: the single chain so far is sealed.

Existing events become the sealed chain (`chain` -1, added without rewriting a row: the table
is append-only). A final event seals it, and the old head becomes the sealed chain's head.
Every chain started from now on carries the seal's hash as its first `prev_hash`, so the
history verifies end to end (apps/audit/chain.py). A new install has nothing to seal: its
chains start at the genesis.
"""

from typing import Any

from django.db import migrations, models
from django.utils import timezone

from apps.audit.chain import SEAL_ACTION, SEALED_CHAIN, link_hash

_COLUMNS = (
    "id", "created_at", "actor_type", "actor_id", "actor_name", "action", "namespace_id",
    "namespace_slug", "subject_id", "object_type", "object_id", "request_id", "ip", "outcome",
    "details", "prev_hash", "hash", "chain",
)


def seal(apps: Any, schema_editor: Any) -> None:
    import json

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("LOCK TABLE audit_chainhead IN EXCLUSIVE MODE")
        cursor.execute("SELECT count(*), max(id) FROM audit_auditevent")
        count, newest = cursor.fetchone()
        if not count:
            cursor.execute("DELETE FROM audit_chainhead")  # nothing to seal
            return
        cursor.execute("SELECT hash FROM audit_auditevent WHERE id = %s", [newest])
        (previous,) = cursor.fetchone()
        # Ids came from the head so far; from now on the table's sequence hands them out.
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('audit_auditevent', 'id'), %s)", [newest]
        )
        cursor.execute("SELECT nextval(pg_get_serial_sequence('audit_auditevent', 'id'))")
        (seal_id,) = cursor.fetchone()
        event: dict[str, Any] = {
            "id": seal_id,
            "created_at": timezone.now().isoformat(timespec="microseconds"),
            "actor_type": "system",
            "actor_id": "",
            "actor_name": "migration",
            "action": SEAL_ACTION,
            "namespace_id": None,
            "namespace_slug": "",
            "subject_id": None,
            "object_type": "audit_chain",
            "object_id": str(SEALED_CHAIN),
            "request_id": "",
            "ip": None,
            "outcome": "success",
            "details": {"events": count, "through_event_id": newest},
            "prev_hash": previous,
        }
        event["hash"] = link_hash(event)
        event["chain"] = SEALED_CHAIN
        row = [json.dumps(event[c]) if c == "details" else event[c] for c in _COLUMNS]
        placeholders = ", ".join("%s::jsonb" if c == "details" else "%s" for c in _COLUMNS)
        cursor.execute(
            f"INSERT INTO audit_auditevent ({', '.join(_COLUMNS)}) VALUES ({placeholders})",
            row,
        )
        cursor.execute("DELETE FROM audit_chainhead")
        cursor.execute(
            "INSERT INTO audit_chainhead (id, last_id, last_hash) VALUES (%s, %s, %s)",
            [SEALED_CHAIN, seal_id, event["hash"]],
        )


def unseal(apps: Any, schema_editor: Any) -> None:
    """Back to one head. The seal stays (the table is append-only) as the single chain's
    newest link; events appended to newer chains since then do not link into it."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DELETE FROM audit_chainhead WHERE id <> %s", [SEALED_CHAIN])
        cursor.execute("UPDATE audit_chainhead SET id = 1 WHERE id = %s", [SEALED_CHAIN])


class Migration(migrations.Migration):
    dependencies = [("audit", "0006_read_subjects_index")]

    operations = [
        # Existing rows take -1 from the column's default, without an UPDATE; then the
        # default becomes the global chain's key (Django keeps no database default).
        migrations.AddField(
            model_name="auditevent",
            name="chain",
            field=models.BigIntegerField(default=SEALED_CHAIN),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="chain",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="chainverification",
            name="chain",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="chainverification",
            name="broken_chain",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="chainhead",
            name="id",
            field=models.BigIntegerField(primary_key=True, serialize=False),
        ),
        migrations.RunPython(seal, unseal),
    ]
