"""Typed readers for environment variables.

Every setting MemoryHub reads from the environment goes through one of these helpers, so a
bad value fails at start-up with a message naming the variable, instead of surfacing later
as a confusing error deep inside a request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str, environ: Mapping[str, str] | None) -> str | None:
    value = (os.environ if environ is None else environ).get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def env_str(
    name: str, default: str | None = None, *, environ: Mapping[str, str] | None = None
) -> str | None:
    """The variable's value, or `default` when it is unset or blank."""
    value = _raw(name, environ)
    return default if value is None else value


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] | None = None) -> bool:
    value = _raw(name, environ)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off."
    )


def env_int(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    value = _raw(name, environ)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum of {minimum}.")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name}={number} is above the maximum of {maximum}.")
    return number


def env_float(
    name: str,
    default: float,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    environ: Mapping[str, str] | None = None,
) -> float:
    value = _raw(name, environ)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number.") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ImproperlyConfigured(f"{name}={value!r} is not a finite number.")
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum of {minimum}.")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name}={number} is above the maximum of {maximum}.")
    return number


def env_list(
    name: str, default: list[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> list[str]:
    """A comma-separated list; blank items are ignored."""
    value = _raw(name, environ)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(
    name: str, default: str, choices: tuple[str, ...], *, environ: Mapping[str, str] | None = None
) -> str:
    value = _raw(name, environ)
    if value is None:
        return default
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of: {', '.join(choices)}.")
    return value


def env_path(name: str, default: Path, *, environ: Mapping[str, str] | None = None) -> Path:
    value = _raw(name, environ)
    return (Path(value) if value is not None else default).expanduser().resolve()


def env_url(
    name: str,
    *,
    schemes: tuple[str, ...],
    default: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """A URL whose scheme is one of `schemes` (and which names a host or a path)."""
    from urllib.parse import urlsplit

    value = _raw(name, environ)
    if value is None:
        return default
    try:
        parts = urlsplit(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} is not a valid URL.") from None
    if parts.scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name} must start with one of {', '.join(s + '://' for s in schemes)}; "
            f"got scheme {parts.scheme or '(none)'!r}."
        )
    if not (parts.netloc or parts.path.strip("/")):
        raise ImproperlyConfigured(f"{name} names no host or database.")
    return value
