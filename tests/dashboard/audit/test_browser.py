"""The audit viewer in headless Chromium, with the governance browser tests' fixtures: the
filters in the address survive a reload; "verify now" runs to its result; axe-core finds no
serious or critical violation on the log, an event and a verification; the CSP refuses
nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User

from apps.audit.models import AuditEvent
from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console
from tests.dashboard.audit.conftest import AuditCast, build_audit_cast


@pytest.fixture
def cast(transactional_db: None) -> AuditCast:
    """The audit cast, committed (the live server's thread must see it), with passwords."""
    return build_audit_cast(password=PASSWORD)


def test_it_keeps_the_filters_in_the_address_across_a_reload(
    cast: AuditCast,
    live_server: Any,
    context: Any,
) -> None:
    base = live_server.url
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "alice")
    page.goto(f"{base}/audit/")
    page.fill("#id_action", "membership.set")
    page.select_option("#id_namespace", "acme")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r"/audit/\?.*action=membership\.set.*namespace=acme"))
    page.locator("#results .count", has_text="1–3 of 3").wait_for()
    page.reload()
    assert page.input_value("#id_action") == "membership.set"
    assert page.input_value("#id_namespace") == "acme"
    rows = page.locator("#results tbody tr")
    assert rows.count() == 3
    expected = AuditEvent.objects.filter(action="membership.set", namespace_id=cast.acme.pk)
    shown = {
        int(text.lstrip("#")) for text in page.locator("#results tbody td a").all_inner_texts()
    }
    assert shown == set(expected.values_list("pk", flat=True))
    assert csp_refusals(said) == []


def test_it_verifies_the_chain_now_and_passes_axe_on_every_page(
    cast: AuditCast,
    live_server: Any,
    context: Any,
) -> None:
    base = live_server.url
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "alice")
    problems: list[str] = []
    seen: list[str] = []

    def check(name: str, path: str | None = None) -> None:
        if path is not None:
            response = page.goto(f"{base}{path}")
            assert response is not None
            assert response.status == 200, (name, response.status)
        page.wait_for_load_state("load")
        seen.append(name)
        problems.extend(f"{name}: {problem}" for problem in axe_problems(page))

    check("log, never verified", "/audit/")
    check("log, filtered", "/audit/?outcome=success&namespace=acme")
    check("log, nothing matches", "/audit/?action=none.such")
    check("event", f"/audit/{cast.acme_event.pk}/")
    page.goto(f"{base}/audit/")
    page.check("#id_full")
    page.click("button:has-text('Verify now')")
    page.wait_for_url(re.compile(r"/audit/verifications/\d+/$"))
    page.locator("#verification-status", has_text="Intact").wait_for()
    check("verification, finished")
    check("log, verified", "/audit/")
    total = AuditEvent.objects.count()
    assert f"Checked all {total} events of 3 chains: intact." in page.inner_text(".chain-status")
    assert len(seen) == 6
    assert problems == [], "axe found serious or critical violations:\n" + "\n".join(problems)
    refused = csp_refusals(said)
    assert refused == [], "the Content-Security-Policy refused:\n" + "\n".join(refused)


def test_it_passes_axe_for_an_owner_and_for_someone_without_audit_access(
    cast: AuditCast,
    live_server: Any,
    context: Any,
) -> None:
    base = live_server.url
    User.objects.create_user("nina", "nina@example.com", PASSWORD)  # a member of nothing
    page = context.new_page()
    log_in(page, base, "olive")
    page.goto(f"{base}/audit/")
    assert page.locator("form.verify").count() == 0  # "verify now" is the superusers'
    problems = axe_problems(page)
    page.context.clear_cookies()
    log_in(page, base, "nina")
    page.goto(f"{base}/audit/")
    assert "You have no audit access." in page.inner_text("main")
    problems += axe_problems(page)
    assert problems == [], "\n".join(problems)
