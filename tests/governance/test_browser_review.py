"""The review queue of the demo in headless Chromium, in English and Chinese, at desktop and
phone width: an item's source turn between its neighbours (speakers named, the source
marked), a near-duplicate's other memory, a disputed fact's disputing turn and history; no
sideways scrolling, no serious or critical axe finding (screenshots kept under
MEMORYHUB_REVIEW_SHOTS when it is set)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from apps.demo.services import demo_actor, demo_load
from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console
from tests.privacy.test_browser import DESKTOP, PHONE, no_overflow

# What each language's page calls the parts, and the demo's examples in it.
SEEN = {
    "en": {
        "locale": "en-GB",
        "heading": "Disputed",
        "said": "Said in the conversation",
        "source": "source",
        "history": "in doubt, waiting for a reviewer",
        "fact": "The user takes ferrous sulfate.",
        "turn": "My doctor took me off the ferrous sulfate.",
        "before": "Three short runs a week",
        "after": "Take it with orange juice",
        "pair": "Prefers weekday evening cooking classes, after work.",
        "twin": "Prefers cooking classes on weekday evenings, after work.",
    },
    "zh-hans": {
        "locale": "zh-CN",
        "heading": "有争议",
        "said": "对话中的原话",
        "source": "来源",
        "history": "存疑，等待审核",
        "fact": "用户对芒果过敏。",
        "turn": "医生说我对芒果过敏可能是误诊。",
        "before": "一杯手冲咖啡",
        "after": "给你的甜点食谱都不放芒果",
        "pair": "喜欢在周末上午上烘焙课。",
        "twin": "喜欢周末上午上烘焙课。",
    },
}


def test_the_queue_shows_what_to_decide_from_on_a_desktop_and_a_phone(
    transactional_db: None, live_server: Any, browser: Any, tmp_path: Path
) -> None:
    record = os.environ.get("MEMORYHUB_REVIEW_SHOTS")
    shots = Path(record) if record else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    demo_load(actor=demo_actor())
    problems: list[str] = []
    for language, seen in SEEN.items():
        for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
            context = browser.new_context(viewport=size, locale=seen["locale"])
            page = context.new_page()
            said = watch_console(page)
            log_in(page, live_server.url, "root")
            page.goto(f"{live_server.url}/n/demo/review/")
            assert seen["heading"] in page.locator("section.queue-section h2").first.inner_text()

            disputed = page.locator("article[data-reason='disputed']", has_text=seen["fact"])
            turns = disputed.locator(".said li").all_inner_texts()
            assert len(turns) == 3, turns
            before, source, after = turns
            assert seen["before"] in before
            assert seen["after"] in after
            assert disputed.locator(".said li.source").inner_text() == source
            assert seen["source"] in source
            assert source.split()[0] in ("user", "用户")  # the speaker, named
            assert seen["turn"] in disputed.locator(".disputing").inner_text()
            history = disputed.locator(".history .timeline")
            assert seen["fact"] in history.inner_text()
            assert seen["history"] in history.locator(".step").last.inner_text()

            pair = page.locator("article[data-reason='duplicate']", has_text=seen["pair"])
            twin = pair.locator(".twin")
            assert twin.locator("a", has_text=seen["twin"]).is_visible()
            assert twin.locator(".badge").first.is_visible()  # its kind

            no_overflow(page, size["width"])
            page.screenshot(path=shots / f"review-{language}-{name}.png", full_page=True)
            problems += [f"{language} {name}: {line}" for line in axe_problems(page)]
            assert csp_refusals(said) == []
            context.close()
    assert problems == []
