"""The corrected allergy's timeline in headless Chromium, on the demo: the subject's page
and the person's portal history, in English and Chinese, at desktop and phone width (no
sideways scrolling; screenshots kept under MEMORYHUB_TIMELINE_SHOTS when it is set)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from apps.demo.services import demo_actor, demo_load
from apps.memories.models import Subject
from apps.privacy.services import portal_link_create
from tests.browser import PASSWORD, csp_refusals, log_in, watch_console
from tests.privacy.test_browser import DESKTOP, PHONE, no_overflow

SAID = {
    "en": ("corrected by the person in conversation", "you corrected it in conversation"),
    "zh-hans": ("由本人在对话中更正", "你在对话中更正了它"),
}


@pytest.mark.parametrize("locale", ["en", "zh-hans"])
def test_the_allergy_timeline_reads_in_order_on_a_desktop_and_a_phone(
    transactional_db: None, live_server: Any, browser: Any, tmp_path: Path, locale: str
) -> None:
    record = os.environ.get("MEMORYHUB_TIMELINE_SHOTS")
    shots = Path(record) if record else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    demo_load(actor=demo_actor())
    subject = Subject.objects.get(namespace__slug="demo", external_id="demo-user-1")
    admin_said, person_said = SAID[locale]
    for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
        context = browser.new_context(viewport=size, locale="zh-CN" if locale != "en" else "en")
        page = context.new_page()
        said = watch_console(page)
        log_in(page, live_server.url, "root")
        page.goto(f"{live_server.url}/n/demo/subjects/{subject.pk}/")
        allergy = page.locator(".timeline", has_text="peanut")
        text = allergy.inner_text()
        assert admin_said in text
        assert text.index("peanut") < text.index("shellfish")  # what held, then what holds
        current = allergy.locator(".step.current").inner_text()
        assert current.strip().startswith("The user is allergic to shellfish.")
        allergy.locator(".turn-link").first.wait_for()
        no_overflow(page, size["width"])
        page.screenshot(path=shots / f"subject-{locale}-{name}.png", full_page=True)

        link = portal_link_create(
            actor=demo_actor(name="tests"), namespace=subject.namespace, subject=subject,
            base_url="http://testserver", locale=locale,
        )  # fmt: skip
        page.goto(live_server.url + link.url.removeprefix("http://testserver"))
        page.wait_for_url(f"**/portal/{subject.pk}/")
        page.goto(f"{live_server.url}/portal/{subject.pk}/memories/?kind=history")
        mine = page.locator(".timeline", has_text="peanut").inner_text()
        assert person_said in mine
        assert mine.index("peanut") < mine.index("shellfish")
        no_overflow(page, size["width"])
        page.screenshot(path=shots / f"portal-{locale}-{name}.png", full_page=True)
        assert csp_refusals(said) == []
        context.close()
