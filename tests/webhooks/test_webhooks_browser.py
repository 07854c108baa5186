"""The webhooks pages in headless Chromium: an owner adds an endpoint (a real receiver on
loopback), keeps the secret shown once, sends a test event, sees it delivered in the log
with the receiver's answer, and redelivers it under the same webhook-id. At desktop width in
English and at phone width (375 px) in Chinese, with axe on each page."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from standardwebhooks import Webhook

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create
from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console
from tests.webhooks.conftest import Receiver

PHONE = {"width": 375, "height": 740}


@pytest.fixture
def acme(transactional_db: None) -> Namespace:
    olive = User.objects.create_user("olive", "olive@example.com", PASSWORD)
    return namespace_create(actor=Actor.for_user(olive), slug="acme", owner=olive)


@pytest.fixture
def live_dispatch(webhook_settings: Any) -> Any:
    """Deliveries made by the web process's own dispatcher thread, as without a broker."""
    webhook_settings.MEMORYHUB_WEBHOOK_DISPATCHER = True
    return webhook_settings


def wait_for_status(page: Any, status: str, count: int = 1) -> Any:
    """Reload the log until `count` deliveries show `status` (the dispatcher sends them)."""
    rows = page.locator(f'#deliveries tr[data-status="{status}"]')
    deadline = time.monotonic() + 15
    while rows.count() < count:
        assert time.monotonic() < deadline, f"no {count} {status} deliveries within 15 s"
        time.sleep(0.3)
        page.reload()
    return rows


@pytest.mark.parametrize(
    ("locale", "viewport", "words"),
    [
        ("en-GB", None, {
            "add": "Add the endpoint", "test": "Send a test event", "log": "To the delivery log",
            "redeliver": "Redeliver", "delivered": "delivered", "attempts": "2 attempts",
        }),
        ("zh-CN", PHONE, {
            "add": "添加端点", "test": "发送测试事件", "log": "前往投递日志",
            "redeliver": "重新投递", "delivered": "已投递", "attempts": "2 次尝试",
        }),
    ],
)  # fmt: skip
def test_an_owner_adds_an_endpoint_tests_it_and_redelivers(
    acme: Namespace,
    receiver: Receiver,
    live_dispatch: Any,
    live_server: Any,
    browser: Any,
    locale: str,
    viewport: dict[str, int] | None,
    words: dict[str, str],
) -> None:
    context = browser.new_context(locale=locale, viewport=viewport)
    page = context.new_page()
    said = watch_console(page)
    log_in(page, live_server.url, "olive")
    page.goto(f"{live_server.url}/n/acme/")
    if viewport == PHONE:  # on a phone the namespace's pages fold behind their button
        page.locator("button[aria-controls=namespace-menu]").click()
    page.locator("nav.tabs a[href='/n/acme/webhooks/']").click()
    problems = axe_problems(page)
    page.fill("input[name=url]", receiver.url)
    page.get_by_role("button", name=words["add"]).click()
    secret = page.input_value("#webhook-secret")
    assert secret.startswith("whsec_")
    problems += axe_problems(page)
    page.get_by_role("link", name=words["log"]).click()

    with page.expect_navigation():  # the form posts, then redirects back to the log
        page.get_by_role("button", name=words["test"]).click()
    delivered = wait_for_status(page, "delivered")
    assert words["delivered"] in delivered.first.inner_text()
    (first,) = [Webhook(secret).verify(a.body, a.headers) for a in receiver.arrivals]
    assert first["type"] == "webhook.test"
    problems += axe_problems(page)

    with page.expect_navigation():  # a reload before the redirect lands would race it
        delivered.first.get_by_role("button", name=words["redeliver"]).click()
    deadline = time.monotonic() + 15
    while len(receiver.arrivals) < 2:
        assert time.monotonic() < deadline, "the redelivery did not arrive within 15 s"
        time.sleep(0.2)
    ids = {a.headers["webhook-id"] for a in receiver.arrivals}
    assert len(ids) == 1  # the receiver's idempotency key, the same both times
    page.reload()
    row = page.locator("#deliveries tr[data-status=delivered]").first
    row.locator("summary").click()
    assert words["attempts"] in row.inner_text()
    assert "200" in row.inner_text()
    assert "ok ok" in row.locator("pre.response").first.inner_text()
    problems += axe_problems(page)
    context.close()
    actions = set(AuditEvent.objects.filter(namespace_slug="acme").values_list("action", flat=True))
    assert {"webhook.create", "webhook.test", "webhook.redeliver"} <= actions
    assert problems == []
    assert csp_refusals(said) == []
