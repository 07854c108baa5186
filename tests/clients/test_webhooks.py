"""The SDK's `verify_webhook` against requests signed by the `standardwebhooks` package (the
one the server signs with): what it signed passes, anything altered, late or signed with
another secret does not. No server."""

from __future__ import annotations

import base64
import json
import os
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memoryhub_client import WebhookVerificationFailed, verify_webhook
from standardwebhooks import Webhook

BODY = json.dumps(
    {"type": "memory.created", "timestamp": "2026-01-05T10:00:00Z", "data": {"id": "m1"}}
).encode()


def new_secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(24)).decode()


OLD, NEW, OTHER = new_secret(), new_secret(), new_secret()


def signed(
    body: bytes, *secrets: str, message_id: str = "msg_1", at: datetime | None = None
) -> dict[str, str]:
    """The headers of a request signed by each of `secrets` (space-separated signatures)."""
    when = at or datetime.now(UTC)
    signatures = [Webhook(secret).sign(message_id, when, body) for secret in secrets]
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(when.timestamp())),
        "webhook-signature": " ".join(signatures),
    }


def refusal(headers: dict[str, str], body: bytes | str, secret: str) -> str:
    with pytest.raises(WebhookVerificationFailed) as refused:
        verify_webhook(headers, body, secret)
    return refused.value.code


def test_it_returns_the_payload_of_a_signed_request() -> None:
    assert verify_webhook(signed(BODY, NEW), BODY, NEW) == json.loads(BODY)


def test_it_agrees_with_standardwebhooks_on_what_passes() -> None:
    headers = signed(BODY, NEW)
    assert verify_webhook(headers, BODY, NEW) == Webhook(NEW).verify(BODY, headers)


def test_it_reads_headers_in_any_letter_case_and_a_text_body() -> None:
    headers = {name.title(): value for name, value in signed(BODY, NEW).items()}
    assert verify_webhook(headers, BODY.decode(), NEW)["data"] == {"id": "m1"}


def test_it_takes_a_secret_without_its_prefix() -> None:
    assert verify_webhook(signed(BODY, NEW), BODY, NEW.removeprefix("whsec_"))["type"]


def test_it_refuses_a_tampered_body() -> None:
    tampered = BODY.replace(b"m1", b"m2")
    assert refusal(signed(BODY, NEW), tampered, NEW) == "no_matching_signature"


def test_it_refuses_a_tampered_id_or_timestamp() -> None:
    headers = signed(BODY, NEW)
    assert refusal({**headers, "webhook-id": "msg_2"}, BODY, NEW) == "no_matching_signature"
    later = str(int(headers["webhook-timestamp"]) + 1)
    assert refusal({**headers, "webhook-timestamp": later}, BODY, NEW) == "no_matching_signature"


def test_it_refuses_a_request_signed_with_another_secret() -> None:
    assert refusal(signed(BODY, OTHER), BODY, NEW) == "no_matching_signature"


def test_it_refuses_a_request_older_than_five_minutes() -> None:
    old = datetime.now(UTC) - timedelta(minutes=6)
    assert refusal(signed(BODY, NEW, at=old), BODY, NEW) == "timestamp_too_old"


def test_it_refuses_a_request_dated_ahead() -> None:
    ahead = datetime.now(UTC) + timedelta(minutes=6)
    assert refusal(signed(BODY, NEW, at=ahead), BODY, NEW) == "timestamp_too_new"


def test_it_passes_a_request_four_minutes_old() -> None:
    recent = datetime.now(UTC) - timedelta(minutes=4)
    assert verify_webhook(signed(BODY, NEW, at=recent), BODY, NEW)["type"] == "memory.created"


def test_during_a_rotation_either_secret_verifies_the_two_signatures() -> None:
    headers = signed(BODY, OLD, NEW)
    assert len(headers["webhook-signature"].split()) == 2
    assert verify_webhook(headers, BODY, OLD) == verify_webhook(headers, BODY, NEW)
    assert refusal(headers, BODY, OTHER) == "no_matching_signature"


def test_after_a_rotation_the_old_secret_no_longer_verifies() -> None:
    assert refusal(signed(BODY, NEW), BODY, OLD) == "no_matching_signature"


def test_it_ignores_signatures_of_other_versions() -> None:
    headers = signed(BODY, NEW)
    headers["webhook-signature"] = headers["webhook-signature"].replace("v1,", "v1a,")
    assert refusal(headers, BODY, NEW) == "no_matching_signature"


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_it_refuses_a_request_without_each_header(missing: str) -> None:
    headers = signed(BODY, NEW)
    del headers[missing]
    assert refusal(headers, BODY, NEW) == "missing_headers"


def test_it_refuses_a_timestamp_that_is_not_seconds() -> None:
    headers = {**signed(BODY, NEW), "webhook-timestamp": "yesterday"}
    assert refusal(headers, BODY, NEW) == "invalid_timestamp"


@pytest.mark.parametrize("secret", ["whsec_", "whsec_not base64!", ""])
def test_it_refuses_a_secret_that_is_not_base64(secret: str) -> None:
    assert refusal(signed(BODY, NEW), BODY, secret) == "invalid_secret"


def test_it_refuses_a_signed_body_that_is_not_a_json_object() -> None:
    assert refusal(signed(b"[1, 2]", NEW), b"[1, 2]", NEW) == "invalid_payload"
    assert refusal(signed(b"not json", NEW), b"not json", NEW) == "invalid_payload"


def test_its_error_is_the_sdks() -> None:
    from memoryhub_client import MemoryHubError

    with pytest.raises(MemoryHubError, match="no_matching_signature"):
        verify_webhook(signed(BODY, OTHER), BODY, NEW)


@given(
    body=st.binary(max_size=200),
    message_id=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1),
    flip=st.integers(min_value=0),
)
def test_it_refuses_any_one_byte_change_to_what_was_signed(
    body: bytes, message_id: str, flip: int
) -> None:
    payload = json.dumps({"type": "test", "data": {"b": body.hex()}}).encode()
    headers = signed(payload, NEW, message_id=message_id)
    assert verify_webhook(headers, payload, NEW)["data"] == {"b": body.hex()}
    at = flip % len(payload)
    changed = payload[:at] + bytes([payload[at] ^ 1]) + payload[at + 1 :]
    assert refusal(headers, changed, NEW) == "no_matching_signature"
