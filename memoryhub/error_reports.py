"""What an error report may show: Django's debug pages (DEBUG on), the admins' error e-mails
and logged exceptions never carry a secret the settings hold.

Django hides settings whose *name* looks secret (API, AUTH, TOKEN, KEY, SECRET, PASS,
SIGNATURE). That misses `MEMORYHUB_KEK`, a password inside a URL (`DATABASE_URL`,
`CELERY_BROKER_URL`, `CACHE_URL`, any endpoint's URL), the same values again in
`request.META` (runserver copies the environment there), the portal's cookie, and a traceback's
local variables, which Django shows in full whenever DEBUG is on. So names are matched more
widely here, and known secret *values* are blotted out wherever they appear: in settings,
headers, cookies, locals and the rendered report itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import ItemsView, Iterable
from pathlib import Path
from types import FrameType
from typing import Any

from django.conf import settings
from django.dispatch import receiver
from django.http import HttpRequest
from django.test.signals import setting_changed
from django.utils.safestring import SafeString, mark_safe
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

HIDDEN = "********************"
# Django's names, and: KEK (the keyring), credentials, private keys, DSNs, the portal cookie.
HIDDEN_NAMES = re.compile(
    "API|AUTH|TOKEN|KEY|KEK|SECRET|PASS|SIGNATURE|HTTP_COOKIE|CREDENTIAL|PRIVATE|DSN"
    "|memoryhub_portal",  # apps.privacy.views.COOKIE: a portal session's bearer key
    flags=re.IGNORECASE,
)
# Settings (and dict keys within them) whose string values are themselves secrets, to be
# blotted out wherever else they show up. Narrower than HIDDEN_NAMES, whose matches include
# ordinary values (AUTH_USER_MODEL, PASSWORD_HASHERS) that must stay readable elsewhere.
SECRET_NAMES = re.compile(r"KEK|SECRET|PASSWORD$|API_KEY$|CREDENTIAL|PRIVATE_KEY", re.I)
# `scheme://user:password@host`: the password part.
URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^\s:/@]*:)(?P<password>[^\s@/]+)(?=@)")
# libpq's key=value form, `password=…`.
CONNINFO_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<password>'[^']*'|\S+)", re.I)
# A privacy-portal link's token (a bearer secret until spent), in a path or a URL.
PORTAL_TOKEN = re.compile(r"(?P<head>/portal/(?:enter|receipts)/)(?P<password>[^\s/?#\"'<>&]+)")
# The files MemoryHub generates in its data directory hold secrets: never more than a line.
DATA_FILE_MAX_BYTES = 4096
# A shorter value would blot out ordinary words and numbers.
MIN_SECRET_LENGTH = 8
# An AES-256 key (a subject's data key, a KEK) is 32 raw bytes.
RAW_KEY_BYTES = 32


@functools.cache
def secret_values() -> tuple[str, ...]:
    """Every secret string the settings hold, and what the data directory's small files hold,
    longest first (so a value containing another is blotted out whole)."""
    found: set[str] = set()
    for entry in str(getattr(settings, "MEMORYHUB_KEK", "")).split(","):
        found.add(entry.strip())
        found.add(entry.partition(":")[2].strip())  # the base64 of the key alone
    # SECRET_KEY and its fallbacks, the keyring, API keys, passwords (SECRET_NAMES), and
    # every password inside a URL.
    for name in dir(settings):
        if name.isupper():
            found.update(_secrets_inside(name, getattr(settings, name, None)))
    found.update(_data_dir_values(Path(getattr(settings, "DATA_DIR", ""))))
    return tuple(sorted((v for v in found if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True))


def _secrets_inside(name: str, value: Any) -> Iterable[str]:
    """Secret strings of one setting: any string under a secret-looking name, and the
    password of any URL or conninfo string, however deep in dicts and lists."""
    if isinstance(value, str):
        text = str(value)  # a lazy string proxy passes isinstance but not re
        if SECRET_NAMES.search(name):
            yield text
        for pattern in (URL_PASSWORD, CONNINFO_PASSWORD):
            yield from (match["password"] for match in pattern.finditer(text))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _secrets_inside(str(key), item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _secrets_inside(name, item)


def _data_dir_values(data_dir: Path) -> Iterable[str]:
    """The contents of the small files directly in the data directory (`kek`,
    `secret_key`, and whatever else MemoryHub generates there)."""
    if not data_dir.is_dir():
        return
    for path in data_dir.iterdir():
        try:
            if path.is_file() and path.stat().st_size <= DATA_FILE_MAX_BYTES:
                yield from (line.strip() for line in path.read_text().splitlines())
        except (OSError, UnicodeDecodeError):
            continue


def redact(text: str) -> str:
    """`text` with every known secret value and URL or conninfo password replaced by stars,
    and a portal link's token or a receipt's code by `[token]`."""
    for secret in secret_values():
        if secret in text:
            text = text.replace(secret, HIDDEN)
    for pattern in (URL_PASSWORD, CONNINFO_PASSWORD):
        text = pattern.sub(lambda match: match["head"] + HIDDEN, text)
    return PORTAL_TOKEN.sub(r"\g<head>[token]", text)


@receiver(setting_changed)
def _settings_changed(**kwargs: Any) -> None:
    secret_values.cache_clear()


def _is_secret_value(value: Any, depth: int = 0) -> bool:
    """A raw key, or a value whose text shows a known secret; containers by their items
    (a keyring is a dict of raw keys)."""
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        return len(raw) == RAW_KEY_BYTES or any(
            secret.encode() in raw for secret in secret_values()
        )
    if depth < 3 and isinstance(value, dict):
        return any(_is_secret_value(item, depth + 1) for item in value.values())
    if depth < 3 and isinstance(value, list | tuple | set | frozenset):
        return any(_is_secret_value(item, depth + 1) for item in value)
    try:
        shown = repr(value)
    except Exception:  # a broken __repr__: Django shows its own message for it
        return False
    return redact(shown) != shown


class SecretsHidingFilter(SafeExceptionReporterFilter):
    """Django's filter, hiding settings, headers, cookies and local variables by a wider set
    of names and by their values (`redact`), with DEBUG on as well as off."""

    cleansed_substitute = HIDDEN
    hidden_settings = HIDDEN_NAMES

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        cleansed = super().cleanse_setting(key, value)
        if isinstance(cleansed, str):
            redacted = redact(str(cleansed))  # str(): a lazy string proxy passes isinstance
            return cleansed if redacted == cleansed else redacted
        if isinstance(cleansed, bytes | bytearray) and _is_secret_value(cleansed):
            return HIDDEN
        return cleansed

    def get_traceback_frame_variables(
        self, request: HttpRequest | None, tb_frame: FrameType
    ) -> ItemsView[str, Any]:
        variables = super().get_traceback_frame_variables(request, tb_frame)
        return {
            name: HIDDEN if _is_secret_value(value) else value for name, value in variables
        }.items()


class SecretsHidingReporter(ExceptionReporter):
    """The debug page and the error e-mail, with known secrets blotted out of the finished
    report too: the exception's message, the request's URL and anything a filter cannot
    reach. (Stars in place of a secret leave safe HTML safe.)"""

    def get_traceback_html(self) -> SafeString:
        return mark_safe(redact(super().get_traceback_html()))  # noqa: S308

    def get_traceback_text(self) -> SafeString:
        return mark_safe(redact(super().get_traceback_text()))  # noqa: S308
