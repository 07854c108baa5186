"""The overview, namespaces, settings and members in headless Chromium: a retention change
previewed then saved; a member added as viewer who then cannot edit; the overview's charts
with the demo's data; a page in Chinese; axe on every page."""

from __future__ import annotations

import re
from typing import Any

from apps.demo.services import demo_actor, demo_load
from apps.memories.models import Memory
from apps.namespaces.models import Namespace
from tests.browser import axe_problems, csp_refusals, log_in, watch_console
from tests.governance import test_browser as shared
from tests.governance.conftest import Cast

cast = shared.cast  # the cast, committed for the live server, with passwords


def test_it_previews_a_retention_change_then_saves_it(
    cast: Cast, live_server: Any, context: Any
) -> None:
    page = context.new_page()
    log_in(page, live_server.url, "olive")
    page.goto(f"{live_server.url}/n/acme/settings/")
    page.fill("#id_retention_days", "30")
    page.click("form.settings button[type=submit]")
    preview = page.locator(".preview")
    preview.wait_for()
    assert "This retention change would archive" in preview.inner_text()
    assert Namespace.objects.get(slug="acme").retention_days is None
    preview.locator("button[type=submit]").click()
    page.get_by_text("Settings saved.").wait_for()
    assert Namespace.objects.get(slug="acme").retention_days == 30
    assert page.input_value("#id_retention_days") == "30"


def test_it_adds_a_viewer_who_then_cannot_edit(
    cast: Cast, live_server: Any, context: Any, browser: Any
) -> None:
    from django.contrib.auth.models import User

    from tests.browser import PASSWORD

    User.objects.create_user("nora", "nora@example.com", PASSWORD)
    owner = context.new_page()
    log_in(owner, live_server.url, "olive")
    owner.goto(f"{live_server.url}/n/acme/members/")
    owner.fill("#id_add-username", "nora")
    owner.select_option("#id_add-role", "viewer")
    owner.click("form:has(#id_add-username) button[type=submit]")
    owner.get_by_text("Members updated.").wait_for()
    assert owner.locator("#role-{}".format(User.objects.get(username="nora").pk)).input_value() == (
        "viewer"
    )

    nora = browser.new_context().new_page()
    log_in(nora, live_server.url, "nora")
    nora.goto(f"{live_server.url}/n/acme/memories/{cast.fact.pk}/")
    assert nora.locator("#memory-content").inner_text() == "The user likes jasmine green tea."
    assert nora.locator("a", has_text="Edit").count() == 0
    response = nora.goto(f"{live_server.url}/n/acme/memories/{cast.fact.pk}/edit/")
    assert response is not None
    assert response.status == 403

    # Removing asks first, saying what is lost; Cancel keeps the member.
    owner.get_by_role("button", name="Remove nora").click()
    owner.get_by_role("heading", name="Remove nora?").wait_for()
    assert "reading this namespace's memories" in owner.locator("main").inner_text()
    owner.get_by_role("link", name="Cancel").click()
    owner.get_by_role("button", name="Remove nora").wait_for()
    owner.get_by_role("button", name="Remove nora").click()
    owner.locator("main form button.danger").click()
    owner.get_by_text("Members updated.").wait_for()
    assert owner.get_by_role("button", name="Remove nora").count() == 0
    # A new member is a viewer unless the owner chooses more.
    assert owner.locator("#id_add-role").input_value() == "viewer"
    assert owner.locator("#id_invite-role").input_value() == "viewer"


def test_it_draws_the_overview_charts_with_the_demo(live_server: Any, context: Any) -> None:
    from django.contrib.auth.models import User

    from tests.browser import PASSWORD

    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    demo_load(actor=demo_actor())
    page = context.new_page()
    said = watch_console(page)
    log_in(page, live_server.url, "root")
    page.goto(f"{live_server.url}/n/demo/")
    charts = page.locator("figure.chart img")
    assert charts.count() == 6
    for i in range(6):  # every picture decoded, at its size
        assert charts.nth(i).evaluate("img => img.complete && img.naturalWidth") == 760
    written = page.locator("figure.chart figcaption").first.inner_text()
    assert int(re.match(r"(\d+)", written).group(1)) > 20  # type: ignore[union-attr]
    assert axe_problems(page) == []
    assert csp_refusals(said) == []


def test_it_shows_chinese_to_a_chinese_browser(cast: Cast, live_server: Any, browser: Any) -> None:
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    log_in(page, live_server.url, "olive")
    page.goto(f"{live_server.url}/n/acme/")
    assert re.search(r"[\u4e00-\u9fff]", page.locator("h1").inner_text())
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    context.close()


def test_it_passes_axe_on_the_namespace_pages(cast: Cast, live_server: Any, context: Any) -> None:
    login = context.new_page()
    login.goto(f"{live_server.url}/accounts/login/")
    problems = [f"login: {line}" for line in axe_problems(login)]
    page = context.new_page()
    said = watch_console(page)
    log_in(page, live_server.url, "olive")
    pages = ("/", "/n/acme/", "/namespaces/", "/n/acme/settings/", "/n/acme/members/",
             "/playground/", "/quality/", "/no-such-page/")  # fmt: skip
    for path in pages:
        page.goto(f"{live_server.url}{path}")
        problems += [f"{path}: {line}" for line in axe_problems(page)]
    page.goto(f"{live_server.url}/n/acme/settings/")
    page.fill("#id_retention_days", "10")
    page.click("form.settings button[type=submit]")
    page.locator(".preview").wait_for()
    problems += [f"preview: {line}" for line in axe_problems(page)]
    page.goto(f"{live_server.url}/n/acme/members/")
    page.fill("#id_invite-username", "ivy")
    page.click("form:has(#id_invite-username) button[type=submit]")
    page.locator("#invite-link").wait_for()
    problems += [f"invited: {line}" for line in axe_problems(page)]
    link = page.input_value("#invite-link")
    visitor = context.browser.new_context().new_page()
    visitor.goto(link)
    visitor.get_by_text("Set your password").first.wait_for()
    problems += [f"set password: {line}" for line in axe_problems(visitor)]
    assert problems == []
    assert csp_refusals(said) == []


def test_the_demo_s_review_queue_offers_only_real_duplicates(
    live_server: Any, browser: Any, multilingual: object
) -> None:
    """As shipped: a primary model that reads no Chinese (every Chinese fact on one point,
    as all-MiniLM-L6-v2) beside the multilingual one, which compares the Chinese pairs. The
    queue must not offer to merge "用户住在深圳" with "用户是程序员" (a person pressing m would
    lose one), in the English page or the Chinese one. (The primary model alone: the unit
    tests of duplicate_pairs.)"""
    from django.contrib.auth.models import User

    from apps.memories.embeddings import set_provider
    from apps.memories.keyword_index import tokenize
    from apps.memories.row_encryption import KeyCache, open_memory
    from tests.browser import PASSWORD
    from tests.embedder import EnglishOnlyEmbedder

    set_provider(EnglishOnlyEmbedder())
    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    demo_load(actor=demo_actor())
    keys = KeyCache()
    facts = {
        open_memory(keys, memory)
        for memory in Memory.objects.filter(
            namespace__slug="demo", kind="semantic", valid_to__isnull=True
        )
    }
    assert {"用户住在深圳。", "用户是程序员。"} <= facts  # the two the model cannot tell apart
    for locale in ("en-US", "zh-CN"):
        context = browser.new_context(locale=locale)
        page = context.new_page()
        log_in(page, live_server.url, "root")
        page.goto(f"{live_server.url}/n/demo/review/")
        offered = page.locator('article[data-reason="duplicate"]')
        for i in range(offered.count()):
            pair = offered.nth(i).locator("p a").all_inner_texts()
            assert len(pair) == 2
            assert set(pair) != {"用户住在深圳。", "用户是程序员。"}, locale
            shorter, longer = (set(tokenize(text)) for text in sorted(pair, key=len))
            assert shorter <= longer, pair  # one says what the other says, or less
        context.close()


def test_the_overview_shows_staff_how_far_the_vectors_are_filled(
    cast: Cast, live_server: Any, browser: Any, use_multilingual: object
) -> None:
    """The cast's memories were written before the multilingual model was on: the status
    card shows its fill under way, in Chinese; after `reembed`, every memory embedded."""
    from django.contrib.auth.models import User

    from apps.audit.actors import Actor
    from apps.memories.multilingual import set_multilingual_provider
    from apps.memories.services import memories_reembed
    from tests.browser import PASSWORD

    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    set_multilingual_provider(use_multilingual)  # type: ignore[arg-type]
    try:
        total = Memory.objects.count()
        context = browser.new_context(locale="zh-CN")
        page = context.new_page()
        log_in(page, live_server.url, "root")
        page.goto(f"{live_server.url}/")
        status = page.locator("#status")
        assert "召回仅由主模型比较。" in status.inner_text()
        multilingual = status.locator("dt:has-text('多语言模型') + dd")
        assert f"已完成 0 / {total} 条记忆" in multilingual.inner_text()
        assert multilingual.locator("progress").get_attribute("max") == str(total)
        context.close()

        memories_reembed(actor=Actor.system("tests"))
        page = log_in_page(browser, live_server.url)
        page.goto(f"{live_server.url}/")
        status = page.locator("#status")
        assert "every other pair by the multilingual one" in status.inner_text()
        assert status.get_by_text("every memory embedded").count() == 2
        assert axe_problems(page) == []
    finally:
        set_multilingual_provider(None)


def log_in_page(browser: Any, url: str) -> Any:
    page = browser.new_context().new_page()
    log_in(page, url, "root")
    return page
