"""No error report shows a secret: Django's debug pages (400 and 500, HTML and text, as
`make run` serves them with DEBUG on), and logged exceptions. Django hides settings by name
only, and MEMORYHUB_KEK, a password inside a URL, the portal's cookie and a traceback's
local variables slipped through its names (memoryhub/error_reports.py)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.views.debug import get_default_exception_reporter_filter
from pytest_django.fixtures import Settings

from memoryhub.error_reports import HIDDEN
from tests.foundation.error_urls import LEAKY_DATA_KEY

pytestmark = pytest.mark.django_db

DATABASE_PASSWORD = "db-password-7f3a9c"
BROKER_PASSWORD = "broker-password-2b8e1d"
LLM_KEY = "sk-llm-key-5c0d4e9a"
ENDPOINT_PASSWORD = "endpoint-password-91ac"
PORTAL_COOKIE = "portal-session-key-44e7b0c2"


@pytest.fixture
def debug_site(settings: Settings) -> Iterator[None]:
    """DEBUG on (the embedded quickstart's default), with secrets in every kind of setting."""
    settings.DEBUG = True
    settings.ALLOWED_HOSTS = ["testserver"]
    settings.CELERY_BROKER_URL = f"redis://:{BROKER_PASSWORD}@broker.internal:6379/0"
    settings.MEMORYHUB_LLM_API_KEY = LLM_KEY
    settings.MEMORYHUB_LLM_URL = f"https://bot:{ENDPOINT_PASSWORD}@llm.internal/v1"
    get_default_exception_reporter_filter.cache_clear()
    yield
    get_default_exception_reporter_filter.cache_clear()


def secrets() -> dict[str, str]:
    """Every secret value the page could show, by where it comes from."""
    kek = django_settings.MEMORYHUB_KEK
    found = {
        "MEMORYHUB_KEK": kek,
        "SECRET_KEY": django_settings.SECRET_KEY,
        "the database password (in DATABASE_URL)": DATABASE_PASSWORD,
        "the broker password (in CELERY_BROKER_URL)": BROKER_PASSWORD,
        "MEMORYHUB_LLM_API_KEY": LLM_KEY,
        "the password in MEMORYHUB_LLM_URL": ENDPOINT_PASSWORD,
        "the portal cookie": PORTAL_COOKIE,
        "a data key (raw bytes)": repr(LEAKY_DATA_KEY)[2:-1],
    }
    for number, entry in enumerate(kek.split(",")):
        found[f"the KEK's key {number} in base64"] = entry.partition(":")[2]
    for path in Path(django_settings.DATA_DIR).iterdir():
        if path.is_file():
            for line in path.read_text().splitlines():
                if line.strip():
                    found[f"var/{path.name}"] = line.strip()
    assert {"var/kek", "var/secret_key"} <= set(found)  # the quickstart's generated secrets
    return found


def fetch(path: str, *, host: str, accept: str) -> str:
    client = Client(raise_request_exception=False)
    client.cookies["memoryhub_portal"] = PORTAL_COOKIE
    response = client.get(
        path,
        HTTP_HOST=host,
        HTTP_ACCEPT=accept,
        # runserver copies the process's environment into request.META.
        MEMORYHUB_KEK=django_settings.MEMORYHUB_KEK,
        DATABASE_URL=f"postgres://memoryhub:{DATABASE_PASSWORD}@db.internal/memoryhub",
    )
    assert response.status_code in {400, 500}
    body = response.content.decode()
    # The debug page it is (not the production error page), with the settings listed.
    assert "MEMORYHUB_KEK" in body
    assert "DATABASE_URL" in body
    return body


PAGES = {
    "400 (a Host not allowed)": ("/healthz", "evil.example"),
    "500 (a view fails)": ("/leaky-page/", "testserver"),
}


@pytest.mark.urls("tests.foundation.error_urls")
@pytest.mark.usefixtures("debug_site")
@pytest.mark.parametrize("accept", ["text/html", "application/json"])
@pytest.mark.parametrize("page", PAGES)
def test_no_debug_page_shows_a_secret(page: str, accept: str) -> None:
    path, host = PAGES[page]
    body = fetch(path, host=host, accept=accept)
    shown = [source for source, value in secrets().items() if value in body]
    assert shown == []
    assert HIDDEN in body


@pytest.mark.urls("tests.foundation.error_urls")
@pytest.mark.usefixtures("debug_site")
def test_django_s_own_reporter_would_show_them(settings: Settings) -> None:
    """The probe above finds what it looks for: with Django's filter and reporter the same
    page shows the keyring in clear."""
    settings.DEFAULT_EXCEPTION_REPORTER_FILTER = "django.views.debug.SafeExceptionReporterFilter"
    settings.DEFAULT_EXCEPTION_REPORTER = "django.views.debug.ExceptionReporter"
    get_default_exception_reporter_filter.cache_clear()
    body = fetch("/leaky-page/", host="testserver", accept="text/html")
    shown = {source for source, value in secrets().items() if value in body}
    assert {"MEMORYHUB_KEK", "the broker password (in CELERY_BROKER_URL)"} <= shown


def console_streams(name: str) -> list[logging.StreamHandler]:  # type: ignore[type-arg]
    """The configured stream handlers a record of logger `name` reaches (pytest's own
    capturing handlers left out)."""
    found = []
    logger: logging.Logger | None = logging.getLogger(name)
    while logger is not None:
        found += [h for h in logger.handlers if type(h) is logging.StreamHandler]
        logger = logger.parent if logger.propagate else None
    return found


@pytest.mark.usefixtures("debug_site")
@pytest.mark.parametrize("name", ["django.request", "django.security", "celery.app.trace", "apps"])
def test_no_log_line_shows_a_secret(name: str) -> None:
    handlers = console_streams(name)
    assert handlers, f"no handler prints {name}'s records"
    kek = django_settings.MEMORYHUB_KEK
    written = io.StringIO()
    saved = [handler.setStream(written) for handler in handlers]
    try:
        logger = logging.getLogger(name)
        logger.error("unwrapping with %s failed", kek)
        try:
            raise ConnectionError(
                f"redis://:{BROKER_PASSWORD}@broker.internal refused; secret key "
                f"{django_settings.SECRET_KEY}"
            )
        except ConnectionError:
            logger.exception("the broker is down")
        logger.warning("GET /portal/enter/%s 404", "bearer-token-0a1b2c3d")
        logger.warning("GET /portal/receipts/%s/json/ 404", "7.receipt-code-4e5f")
    finally:
        for handler, stream in zip(handlers, saved, strict=True):
            handler.setStream(stream)
    text = written.getvalue()
    assert "ConnectionError" in text
    assert "Traceback" in text
    assert [source for source, value in secrets().items() if value in text] == []
    assert "bearer-token-0a1b2c3d" not in text
    assert "/portal/enter/[token]" in text
    assert "receipt-code-4e5f" not in text
    assert "/portal/receipts/[token]/json/" in text
