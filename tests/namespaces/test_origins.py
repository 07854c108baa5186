"""Web origins of the privacy portal's settings: normalised, and matched exactly."""

from __future__ import annotations

import pytest

from apps.namespaces.origins import normalize_origin, origin_of, url_allowed


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://App.Example.com/account?x=1", "https://app.example.com"),
        ("https://app.example.com:443/", "https://app.example.com"),
        ("http://localhost:3000/p", "http://localhost:3000"),
        ("https://[::1]:8443/", "https://[::1]:8443"),
        ("javascript:alert(1)", None),
        ("//app.example.com/", None),
        ("https://user:pw@app.example.com/", None),
        ("https://app.example.com:99999/", None),
        ("ftp://app.example.com/", None),
    ],
)
def test_origin_of(url: str, origin: str | None) -> None:
    assert origin_of(url) == origin


def test_an_origin_typed_with_a_path_is_refused_not_cut() -> None:
    assert normalize_origin(" HTTPS://App.example.com/ ") == "https://app.example.com"
    with pytest.raises(ValueError, match="account"):
        normalize_origin("https://app.example.com/account")
    with pytest.raises(ValueError, match="example"):
        normalize_origin("https://app.example.com?next=1")


def test_only_the_exact_origin_is_allowed() -> None:
    allowed = ["https://app.example.com"]
    assert url_allowed("https://app.example.com/settings", allowed)
    assert not url_allowed("https://app.example.com.evil.example/", allowed)
    assert not url_allowed("http://app.example.com/", allowed)  # another scheme
    assert not url_allowed("https://app.example.com:8443/", allowed)  # another port
    assert not url_allowed("https://evil.example/?https://app.example.com", allowed)
