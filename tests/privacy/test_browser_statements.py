"""The portal never contradicts itself, read in headless Chromium as the person would, at
desktop and phone widths, in English and Chinese: the personal-data page says what the
namespace's policy does (store and mark, not "kept out") beside the marked memories it lists,
dates a write by when the person wrote it (an app sent an earlier conversation), and says what
each refused or redacted write left; a memory's "used" figures are those of its "who used it"
list (an administrator's view and a playground trial are no answers, and are said)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone, translation
from django.utils.formats import date_format

from apps.audit.actors import Actor
from apps.governance.services import content_read_record
from apps.memories.models import Memory
from apps.namespaces.services import namespace_update
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.recall.models import RecallLog
from tests.browser import axe_problems, csp_refusals, watch_console
from tests.conftest import Tenant
from tests.privacy.conftest import Story, allow_return, tell
from tests.privacy.test_browser import APP, DESKTOP, PHONE, enter, in_language

EMAIL = "mei.lin@example.com"
SAID_DAYS_AGO = 9


def set_policy(tenant: Tenant, policy: str) -> None:
    namespace_update(actor=Actor.system("tests"), namespace=tenant.namespace, pii_policy=policy)
    tenant.namespace.refresh_from_db()


@pytest.fixture
def planted(transactional_db: None, acme: Tenant, story: Story) -> dict[str, Any]:
    """Each case the portal once got wrong: a phone number redacted, a card refused, an
    e-mail address stored and marked (the namespace's policy now) from a conversation the app
    sent nine days after it was held; a memory (superseded) an administrator viewed and tried
    in the playground, never served to the app."""
    allow_return(acme, APP)
    set_policy(acme, "redact")
    tell(acme, "u1", "Call me on +1 415 555 0132 after six.", session="s-phone")
    set_policy(acme, "reject")
    refused = acme.client.post(
        acme.url("memories"),
        {"subject": "u1", "content": "Card 4111 1111 1111 1111"},
        format="json",
    )
    assert refused.status_code == 422
    set_policy(acme, "tag")
    said_at = timezone.now() - timedelta(days=SAID_DAYS_AGO)
    messages_ingest(
        actor=Actor.system("tests"),
        namespace=acme.namespace,
        subject_external_id="u1",
        session_external_id="s-mail",
        messages=[IncomingMessage("user", f"My email is {EMAIL}.", created_at=said_at)],
    )
    alice = User.objects.create_superuser("alice", "alice@example.com", "alice-password-1")
    content_read_record(
        actor=Actor.for_user(alice),
        namespace=acme.namespace,
        what="memory",
        memory_ids=[story.old.pk],
    )
    RecallLog.objects.create(
        namespace=acme.namespace,
        subject=story.old.subject,
        purpose="playground",
        actor_type="user",
        actor_id=str(alice.pk),
        memory_ids=[story.old.pk],
    )
    marked = Memory.objects.filter(subject=story.old.subject, tags__contains=["pii:email"])
    assert marked.exists()
    return {"said_at": said_at, "marked": marked.count()}


def words(page: Any, selector: str) -> str:
    return " ".join(page.locator(selector).inner_text().split())


def check_personal_data(page: Any, home: str, locale: str, planted: dict[str, Any]) -> None:
    page.goto(f"{home}blocked/")
    in_language(page, locale)
    text = words(page, "main")
    english = locale == "en"
    # What the policy does now (store and mark), never "kept out" beside what is stored.
    assert page.locator(".policy-now").get_attribute("data-policy") == "tag"
    if english:
        assert "stored as you wrote it, and marked as personal data" in text
        assert "kept out" not in text
        assert "never recorded" not in text
    email_row = words(page, "#kinds tr[data-kind=email]")
    listed = page.locator("#stored-heading ~ ul.memory-list > li")
    assert listed.count() == planted["marked"]
    assert str(planted["marked"]) in email_row
    assert EMAIL in words(page, "#stored-heading ~ ul.memory-list")  # the stored value, shown
    assert "4111" not in text  # what was refused was never recorded
    # The e-mail's write is dated when it was said, like the memory it made, not today.
    with translation.override(locale):
        said = date_format(timezone.localtime(planted["said_at"]), "DATE_FORMAT")
        today = date_format(timezone.localtime(), "DATE_FORMAT")
    rows = page.locator("#writes tbody tr")
    assert rows.count() == 3
    newest = " ".join(rows.nth(0).inner_text().split())
    assert said in newest, newest
    assert today not in newest, newest
    assert EMAIL in newest  # what is kept of it, linked
    rows.nth(0).locator("a").first.click()
    page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
    assert said in words(page, "dl.fields")
    page.go_back()
    if english:
        redacted, refused = (" ".join(rows.nth(i).inner_text().split()) for i in (2, 1))
        assert "removed before anything was stored" in redacted
        assert "none of it" in redacted
        assert "refused: nothing was stored" in refused
        assert "card number" in refused


def check_usage(page: Any, home: str, locale: str, story: Story) -> None:
    for memory, served, entries in ((story.old, 0, 2), (story.fact, 1, 1)):
        page.goto(f"{home}memories/{memory.pk}/")
        in_language(page, locale)
        used = words(page, ".usage")
        assert re.search(rf"\b{served}\b", used), used
        page.locator("dl.fields a[href*='activity/?memory=']").click()
        page.wait_for_url(re.compile(r"/activity/\?memory="))
        assert words(page, "#only-one .usage") == used  # the same figures, from the same rows
        assert page.locator("ol.activity > li").count() == entries
        for entry in page.locator("ol.activity > li").all():
            assert entry.locator(f"a[href$='/memories/{memory.pk}/']").count() == 1
        if locale == "en" and memory == story.old:
            assert used == (
                "in 0 answers; tried 1 time in the playground; looked at 1 time by an administrator"
            )


@pytest.mark.parametrize("locale", ["en", "zh-hans"])
def test_each_statement_matches_what_the_page_shows(
    planted: dict[str, Any],
    acme: Tenant,
    story: Story,
    live_server: Any,
    browser: Any,
    locale: str,
    tmp_path: Path,
) -> None:
    problems: list[str] = []
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        said = watch_console(page)
        home = enter(page, live_server.url, acme, locale=locale)
        check_personal_data(page, home, locale, planted)
        page.goto(f"{home}blocked/")
        page.screenshot(path=str(tmp_path / f"blocked-{locale}-{name}.png"), full_page=True)
        problems += axe_problems(page)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"{name}: the page scrolls sideways ({width}px)"
        check_usage(page, home, locale, story)
        page.screenshot(path=str(tmp_path / f"activity-{locale}-{name}.png"), full_page=True)
        problems += axe_problems(page)
        page.goto(f"{home}memories/{story.old.pk}/")
        problems += axe_problems(page)
        assert csp_refusals(said) == []
        context.close()
    assert problems == []
