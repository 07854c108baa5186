"""Web origins (`https://app.example.com`) a namespace names for its privacy portal: where
a portal link may send the person back to, and which sites may frame the portal."""

from __future__ import annotations

from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str | None:
    """The origin of an absolute http(s) URL, normalised (`scheme://host[:port]`, lower case,
    the scheme's default port left out); None for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.username is not None:
        return None
    host = parts.hostname.lower()
    if ":" in host:  # IPv6
        host = f"[{host}]"
    if port is not None and port != DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}:{port}"
    return f"{parts.scheme}://{host}"


def normalize_origin(text: str) -> str:
    """An origin as an operator typed it, normalised; ValueError when it is not an origin
    (a path, a query or a fragment beyond the origin is refused, not dropped)."""
    origin = origin_of(text)
    parts = urlsplit(text.strip())
    if origin is None or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(text)
    return origin


def url_allowed(url: str, origins: list[str]) -> bool:
    """Whether `url` is an absolute http(s) URL of one of `origins`."""
    origin = origin_of(url)
    return origin is not None and origin in origins
