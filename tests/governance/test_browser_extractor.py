"""The extractor in headless Chromium, in Chinese: an owner chooses the LLM on the settings
page, previews and saves it, and the overview names it with its counters; while the LLM
cannot be reached every page says so. axe on each."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from apps.namespaces.models import Namespace
from apps.pipeline import llm_health
from tests.browser import axe_problems, csp_refusals, log_in, watch_console
from tests.governance import test_browser as shared
from tests.governance.conftest import Cast

cast = shared.cast  # the cast, committed for the live server, with passwords

LLM_URL = "http://127.0.0.1:11434/v1"


@pytest.fixture
def with_llm() -> Iterator[None]:
    """An LLM endpoint on this server (the live server answers in this process)."""
    with override_settings(
        MEMORYHUB_LLM_URL=LLM_URL,
        MEMORYHUB_LLM_MODEL="qwen2.5:7b",
        MEMORYHUB_LLM_BREAKER_FAILURES=1,
        MEMORYHUB_EXTRACTOR="offline",
    ):
        yield


def test_an_owner_chooses_the_llm_in_chinese_and_the_overview_names_it(
    cast: Cast, live_server: Any, browser: Any, with_llm: None
) -> None:
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    said = watch_console(page)
    log_in(page, live_server.url, "olive")
    page.goto(f"{live_server.url}/n/acme/")
    assert page.locator("#extractor").get_attribute("data-extractor") == "offline"
    assert "这是服务器的默认设置。" in page.locator("#extractor").inner_text()
    assert page.locator("#llm-counters").count() == 0

    page.goto(f"{live_server.url}/n/acme/settings/")
    choice = page.locator("#id_extractor")
    assert choice.locator("option").first.inner_text() == "服务器默认（规则）"
    assert page.get_by_label("提取器").count() == 1
    choice.select_option("llm")
    page.click("form.settings button[type=submit]")
    preview = page.locator(".preview")
    preview.wait_for()
    assert "新对话将由以下方式读取：大语言模型（LLM）" in preview.inner_text()
    problems = [f"preview: {line}" for line in axe_problems(page)]
    assert Namespace.objects.get(slug="acme").extractor == ""
    preview.locator("button[type=submit]").click()
    page.get_by_text("设置已保存。").wait_for()
    assert Namespace.objects.get(slug="acme").extractor == "llm"
    assert page.input_value("#id_extractor") == "llm"

    llm_health.call_succeeded(LLM_URL, 0.8)
    page.goto(f"{live_server.url}/n/acme/")
    extractor = page.locator("#extractor")
    assert extractor.get_attribute("data-extractor") == "llm"
    assert "qwen2.5:7b" in extractor.inner_text()
    assert "这是此命名空间自己的选择。" in extractor.inner_text()
    counters = page.locator("#llm-counters")
    assert counters.get_by_role("heading").inner_text() == "LLM 提取器"
    assert counters.locator('[data-counter="calls"]').inner_text() == "1"
    assert counters.locator('[data-counter="p50"]').inner_text() == "0.80 秒"
    assert page.locator("#llm-outage").count() == 0
    problems += [f"overview: {line}" for line in axe_problems(page)]

    llm_health.call_failed(LLM_URL)  # one failure opens the breaker here
    page.goto(f"{live_server.url}/n/acme/memories/")
    banner = page.locator("#llm-outage")
    assert banner.inner_text().startswith("LLM 提取器自 ")
    assert banner.inner_text().endswith("起无法访问，正在使用规则")
    problems += [f"banner: {line}" for line in axe_problems(page)]
    assert problems == []
    assert csp_refusals(said) == []
    context.close()


def test_the_settings_page_refuses_the_llm_without_an_endpoint(
    cast: Cast, live_server: Any, context: Any
) -> None:
    page = context.new_page()
    log_in(page, live_server.url, "olive")
    with override_settings(MEMORYHUB_LLM_URL="", MEMORYHUB_EXTRACTOR="offline"):
        page.goto(f"{live_server.url}/n/acme/settings/")
        page.select_option("#id_extractor", "both")
        page.click("form.settings button[type=submit]")
        error = page.locator("p.error[role=alert]")
        error.wait_for()
    assert "This server has no LLM endpoint" in error.inner_text()
    assert page.locator(".preview").count() == 0
    assert Namespace.objects.get(slug="acme").extractor == ""
