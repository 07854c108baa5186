"""The export: JSON lines in chain order with every hashed field and the hashes, the same
filters as the viewer, bounded at the newest event when it starts, and audited."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from apps.audit import chain
from apps.audit.models import AuditEvent
from apps.audit.services import audit_record
from tests.dashboard.audit.conftest import ACTOR, AuditCast, streamed

EXPORT = "/audit/export.jsonl"


def export(client: Client, query: str = "") -> list[dict[str, Any]]:
    response = client.get(EXPORT + query)
    assert response.status_code == 200
    assert response.streaming
    return [json.loads(line) for line in streamed(response).splitlines()]


def test_it_exports_every_event_oldest_first_with_the_hashed_fields(cast: AuditCast) -> None:
    before = list(AuditEvent.objects.order_by("id").values_list("pk", flat=True))
    lines = export(cast.client("alice"))
    assert [line["id"] for line in lines] == before  # not its own audit event
    for line in lines:
        assert set(line) == {*chain.CHAINED_FIELDS, "hash", "chain"}
        assert chain.link_hash(line) == line["hash"]
    previous: dict[int, str] = {}  # each chain links its own events, from the genesis
    for line in lines:
        assert line["prev_hash"] == previous.get(line["chain"], chain.GENESIS)
        previous[line["chain"]] = line["hash"]
    assert len(previous) == 3  # acme's, globex's and the global chain
    assert chain.verify(lines) == (len(lines), None)


def test_it_sends_json_lines_as_a_download(cast: AuditCast) -> None:
    response = cast.client("alice").get(EXPORT)
    assert response["Content-Type"].startswith("application/jsonl")
    assert response["Content-Disposition"].startswith('attachment; filename="audit-through-')
    assert "no-store" in response["Cache-Control"]


def test_it_exports_what_the_filters_match(cast: AuditCast) -> None:
    lines = export(cast.client("alice"), "?namespace=acme&action=membership.set")
    expected = AuditEvent.objects.filter(namespace_id=cast.acme.pk, action="membership.set")
    assert [line["id"] for line in lines] == list(
        expected.order_by("id").values_list("pk", flat=True)
    )
    assert len(lines) == 3


def test_it_audits_the_export_with_its_filter_names(cast: AuditCast) -> None:
    newest_before = AuditEvent.objects.order_by("-id").first()
    assert newest_before is not None
    export(cast.client("olive"), "?actor=tests&outcome=success")
    event = AuditEvent.objects.order_by("-id").first()
    assert event is not None
    assert event.action == "audit.export"
    assert event.actor_name == "olive"
    assert event.details == {
        "filters": ["actor", "outcome"],
        "through_event_id": newest_before.pk,
    }
    assert event.namespace_id == cast.acme.pk  # olive owns acme only: her export is acme's
    assert "tests" not in json.dumps(event.details)  # filter values stay out


def test_it_stops_at_the_newest_event_when_it_started(cast: AuditCast) -> None:
    response = cast.client("alice").get(EXPORT)
    through = int(response["Content-Disposition"].split("through-")[1].split(".")[0])
    audit_record(actor=ACTOR, action="test.later")
    lines = [json.loads(line) for line in streamed(response).splitlines()]
    assert lines[-1]["id"] == through
    assert "test.later" not in {line["action"] for line in lines}


def test_it_refuses_filters_that_are_not_valid(cast: AuditCast) -> None:
    response = cast.client("alice").get(EXPORT + "?outcome=nope")
    assert response.status_code == 400
