"""An erasure's receipt kept: a download, and an address with a code that fetches it again
after the person has left (no session: they are erased). The code is shown once and stored
only as its hash; any other code is not found, and audited as denied; the receipt holds
nothing about the person, and checks out against the erasure's audit event."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from django.test import Client

from apps.audit.models import AuditEvent
from apps.privacy.models import ErasureReceiptCode
from tests.conftest import Tenant
from tests.privacy.conftest import Story, open_portal

pytestmark = pytest.mark.django_db

ADDRESS = re.compile(r'value="(http://testserver/portal/receipts/([^/"]+)/)"')


def erase(tenant: Tenant) -> tuple[str, str, str]:
    """Erase u1 in the portal: the receipt page, its address, and its code."""
    portal = open_portal(tenant)
    response = portal.client.post(portal.url("erase/"), {"confirmation": "erase everything"})
    assert response.status_code == 200
    page = response.content.decode()
    found = ADDRESS.search(page)
    assert found, page
    return page, found.group(1), found.group(2)


def names_u1(html: str) -> bool:
    """Whether the page's text (not its tags, whose random tokens may hold any letters)
    names the app's id for the person, "u1"."""
    text = re.sub(r"<[^>]*>", " ", html)
    return re.search(r"(?<![\w-])u1(?![\w-])", text) is not None


def test_it_fetches_the_receipt_again_by_its_code_after_the_person_left(
    acme: Tenant, story: Story
) -> None:
    page, address, _code = erase(acme)
    event = AuditEvent.objects.get(action="subject.erase")
    assert event.details["receipt_hash"] in page
    stranger = Client()  # another browser, no portal session: only the code
    response = stranger.get(address.removeprefix("http://testserver"))
    assert response.status_code == 200
    again = response.content.decode()
    assert event.details["receipt_hash"] in again
    assert event.hash in again
    assert f"<dd>{event.details['memories_deleted']}</dd>" in again
    assert "Checked: the receipt number matches" in again
    assert "Shanghai" not in again
    assert not names_u1(again)
    assert "no-store" in response["Cache-Control"]
    assert response["Referrer-Policy"] == "no-referrer"


def test_the_download_holds_what_proves_the_erasure(acme: Tenant, story: Story) -> None:
    _page, _address, code = erase(acme)
    response = Client().get(f"/portal/receipts/{code}/json/")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="erasure-receipt-')
    document = json.loads(response.content)
    event = AuditEvent.objects.get(action="subject.erase")
    assert document["receipt_number"] == event.details["receipt_hash"]
    assert document["audit_event"] == {
        "id": event.pk,
        "hash": event.hash,
        "prev_hash": event.prev_hash,
    }
    numbered = {
        name: document[name]
        for name in (
            "subject_id",
            "subject_fingerprint",
            "memories_deleted",
            "versions_deleted",
            "data_keys_destroyed",
            "erased_at",
        )
    }
    recomputed = hashlib.sha256(json.dumps(numbered, sort_keys=True).encode()).hexdigest()
    assert recomputed == document["receipt_number"]
    assert '"u1"' not in response.content.decode()  # the app's id for the person is not in it


def test_the_code_is_kept_only_as_its_hash_and_its_issue_audited(
    acme: Tenant, story: Story
) -> None:
    _page, _address, code = erase(acme)
    (kept,) = ErasureReceiptCode.objects.all()
    assert kept.code_hash == hashlib.sha256(code.encode()).hexdigest()
    erasure = AuditEvent.objects.get(action="subject.erase")
    issued = AuditEvent.objects.get(action="subject.erase.receipt_code")
    assert issued.actor_type == "subject"
    assert issued.details == {"receipt_event": erasure.pk}
    assert issued.pk == erasure.pk + 1  # written with the erasure, in its transaction
    assert not AuditEvent.objects.filter(details__icontains=code).exists()


def test_a_code_names_its_namespace_and_one_from_before_codes_did_still_opens(
    acme: Tenant, story: Story
) -> None:
    _page, _address, code = erase(acme)
    namespace_id, random_part = code.split(".", 1)
    assert namespace_id == str(acme.namespace.pk)
    old = f"older{random_part}"  # issued before codes named their namespace
    ErasureReceiptCode.objects.update(code_hash=hashlib.sha256(old.encode()).hexdigest())
    assert Client().get(f"/portal/receipts/{old}/json/").status_code == 200
    assert Client().get(f"/portal/receipts/{code}/json/").status_code == 404


@pytest.mark.parametrize("code", ["nothing-here", "x" * 43, "x" * 300])
def test_any_other_code_finds_nothing_and_is_audited(acme: Tenant, story: Story, code: str) -> None:
    erase(acme)
    for path in (f"/portal/receipts/{code}/", f"/portal/receipts/{code}/json/"):
        response = Client().get(path)
        assert response.status_code == 404
        assert "Receipt number" not in response.content.decode()
    refused = AuditEvent.objects.filter(action="portal.receipt", outcome="denied")
    assert refused.count() == 2


def test_the_check_reads_the_text_not_the_tokens() -> None:
    assert names_u1("<p>u1</p>")
    assert names_u1("<dd>erased for u1.</dd>")
    assert not names_u1("""<body hx-headers='{"X-CSRFToken": "obu1Cz-u1_x"}'>erased</body>""")
