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


@pytest.mark.django_db
def test_the_service_stores_only_origins(system_actor) -> None:
    from apps.namespaces.services import namespace_create, namespace_update
    from memoryhub.exceptions import ApplicationError

    namespace = namespace_create(actor=system_actor, slug="acme", name="Acme")
    with pytest.raises(ApplicationError) as refused:
        namespace_update(
            actor=system_actor, namespace=namespace, portal_frame_origins=["'unsafe-inline' *"]
        )
    assert "portal_frame_origins" in refused.value.details
    updated = namespace_update(
        actor=system_actor,
        namespace=namespace,
        portal_frame_origins=["https://B.example", "https://a.example/", "https://b.example"],
    )
    assert updated.portal_frame_origins == ["https://b.example", "https://a.example"]
    with pytest.raises(ApplicationError):
        namespace_update(actor=system_actor, namespace=namespace, erasure_grace_days=31)
