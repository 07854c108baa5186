"""PII detectors: each with positive and negative cases; the policies; reject never echoes."""

from __future__ import annotations

import pytest

from apps.namespaces import pii


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        (pii.EMAIL, "write to jane.doe+news@example.co.uk today", "jane.doe+news@example.co.uk"),
        (pii.PHONE, "call +44 20 7946 0958 after six", "+44 20 7946 0958"),
        (pii.PHONE, "my number is (415) 555-0132", "(415) 555-0132"),
        (pii.CARD, "card 4111 1111 1111 1111 expires soon", "4111 1111 1111 1111"),
        (pii.CARD, "amex 378282246310005", "378282246310005"),
        (pii.IBAN, "IBAN DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00"),
        (pii.IBAN, "GB82WEST12345698765432", "GB82WEST12345698765432"),
        (pii.SSN, "ssn 123-45-6789 on file", "123-45-6789"),
        (
            pii.SECRET,
            "use sk-proj-abcDEF1234567890abcdefGHIJ here",
            "sk-proj-abcDEF1234567890abcdefGHIJ",
        ),
        (
            pii.SECRET,
            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        (pii.SECRET, "AKIAIOSFODNN7EXAMPLE is the id", "AKIAIOSFODNN7EXAMPLE"),
        (
            pii.SECRET,
            "random Zx9QmP2vL8rT4wK7nB3yC6hJ1dF5sG0a blob",
            "Zx9QmP2vL8rT4wK7nB3yC6hJ1dF5sG0a",
        ),
    ],
)
def test_each_detector_finds_its_type(kind: str, text: str, value: str) -> None:
    findings = pii.scan(text)
    assert [(f.type, text[f.start : f.end]) for f in findings] == [(kind, value)]


@pytest.mark.parametrize(
    "text",
    [
        "meet me at the cafe @ noon",  # no e-mail
        "order 4111 1111 1111 1112 shipped",  # fails Luhn: not a card
        "0000 0000 0000 0000",  # Luhn-valid but one repeated digit
        "DE89 3704 0044 0532 0130 01",  # fails mod-97: not an IBAN
        "ssn-like 666-12-3456 and 000-12-3456",  # invalid SSN areas
        "on 2024-05-01 at 10:30 we sold 1234 items",  # dates, times, counts
        "internationalization and abcdefghijklmnopqrstuvwxyz",  # long words, low entropy
        "build 20240501-final-release-candidate",  # an id, not a secret
    ],
)
def test_ordinary_text_is_not_pii(text: str) -> None:
    assert pii.scan(text) == []


def test_redact_stores_typed_placeholders() -> None:
    screened = pii.apply_policy("redact", "mail a@b.io or call +1 415-555-0132")
    assert screened.text == "mail [EMAIL] or call [PHONE]"
    assert screened.types == ["email", "phone"]


def test_tag_keeps_the_text_and_tags_it() -> None:
    screened = pii.apply_policy("tag", "mail a@b.io")
    assert screened.text == "mail a@b.io"
    assert screened.tags == ["pii:email"]


def test_allow_does_not_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_scan(*args: object, **kwargs: object) -> None:
        raise AssertionError("allow scanned the text")

    monkeypatch.setattr(pii, "scan", no_scan)
    screened = pii.apply_policy("allow", "mail a@b.io")
    assert screened == pii.Screened(text="mail a@b.io", types=[], tags=[])


def test_reject_names_the_types_never_the_values() -> None:
    with pytest.raises(pii.PiiRejected) as caught:
        pii.apply_policy("reject", "card 4111 1111 1111 1111, ssn 123-45-6789")
    assert caught.value.types == ["card", "ssn"]
    assert "4111" not in str(caught.value)
    assert "6789" not in str(caught.value)
