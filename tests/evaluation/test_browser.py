"""The quality pages in headless Chromium (Debian's, driven by Playwright), as an owner would
use them on the demo: import the demo's eval set, save two variants, run the set with each,
compare the two runs, promote the better one; axe-core and the CSP on every page; the
overview in Chinese."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User

from apps.demo.services import EVAL_DATA, demo_actor, demo_load
from apps.evaluation.models import EvalRun, EvalSet, RunStatus
from apps.namespaces.models import Namespace
from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def demo(transactional_db: None) -> Namespace:
    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    demo_load(actor=demo_actor())
    return Namespace.objects.get(slug="demo")


def save_variant(page: Any, name: str, **values: str) -> None:
    details = page.locator("#variants details")
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    page.fill("#variant-name", name)
    for field, value in values.items():
        page.fill(f"#variant-{field}", value)
    page.click("#variants button:has-text('Save the variant')")
    page.locator(".messages li", has_text=name).wait_for()


def run_with(page: Any, base: str, set_url: str, variant: str) -> str:
    page.goto(set_url)
    page.select_option("#id_variant", label=variant)
    page.click("button:has-text('Start the run')")
    page.wait_for_url(re.compile(r"/quality/runs/[0-9a-f-]{36}/"))
    page.locator("#figures").wait_for()  # finished (polled, or done in the request)
    return str(page.url)


def test_import_run_compare_and_promote(demo: Namespace, live_server: Any, context: Any) -> None:
    base = live_server.url
    page = context.new_page()
    said = watch_console(page)
    problems: list[str] = []
    log_in(page, base, "root")
    page.goto(f"{base}/n/demo/quality/")
    assert page.locator("h1").inner_text() == "Recall quality"
    problems += axe_problems(page)

    # Import the demo's eval set (the file the demo loads, in the documented format).
    page.fill("#import-name", "Uploaded demo questions")
    page.select_option("#import-format", "jsonl")
    page.set_input_files("#import-file", str(EVAL_DATA))
    page.click("button:has-text('Import')")
    page.wait_for_url(re.compile(r"/quality/sets/[0-9a-f-]{36}/"))
    set_url = str(page.url)
    uploaded = EvalSet.objects.get(namespace=demo, name="Uploaded demo questions")
    cases = uploaded.cases.count()
    assert cases == len([line for line in EVAL_DATA.read_text().splitlines() if line.strip()])
    assert page.locator(".count").inner_text().endswith(f"of {cases}")
    problems += axe_problems(page)

    # Two variants: one without vectors (keywords only), one that leans on them.
    page.goto(f"{base}/n/demo/quality/")
    save_variant(page, "keywords only", w_vector="0", w_context="0")
    save_variant(page, "vectors first", w_keyword="0.2", w_vector="1.5")
    problems += axe_problems(page)

    first = run_with(page, base, set_url, "keywords only")
    second = run_with(page, base, set_url, "vectors first")
    problems += axe_problems(page)
    runs = {run.label: run for run in EvalRun.objects.filter(eval_set=uploaded)}
    assert {label: run.status for label, run in runs.items()} == {
        "keywords only": RunStatus.SUCCEEDED,
        "vectors first": RunStatus.SUCCEEDED,
    }
    recall10 = page.locator("[data-metric='recall@10']").inner_text()
    assert recall10 == f"{runs['vectors first'].metrics['recall@10']:.3f}"

    # A miss opens its recall, with each result's score components.
    page.goto(first + "?misses=1")
    problems += axe_problems(page)
    misses = page.locator("#cases tbody tr a")
    if misses.count():
        misses.first.click()
        page.wait_for_url(re.compile(r"/cases/[0-9a-f-]{36}/"))
        assert page.locator("dl.components").count() >= 1
        problems += axe_problems(page)

    # Compare (the set's page picks the newest as "after", the one before as "before").
    page.goto(set_url)
    page.click("button:has-text('Compare the two chosen runs')")
    page.wait_for_url(re.compile(r"/quality/compare/\?"))
    table = page.locator("#deltas")
    assert "recall@10" in table.inner_text()
    assert re.search(r"\[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", table.inner_text())  # the interval
    problems += axe_problems(page)

    # Promote the "after" variant: the namespace's configuration, shown on the overview.
    page.click("button:has-text('Promote “vectors first”')")
    page.wait_for_url(f"{base}/n/demo/quality/")
    assert "vectors first" in page.locator("#config").inner_text()
    demo.refresh_from_db()
    assert demo.recall_config == {"weights": {"keyword": 0.2, "vector": 1.5}}
    assert second.startswith(f"{base}/n/demo/quality/runs/")
    assert problems == []
    assert csp_refusals(said) == []


def test_the_quality_overview_speaks_chinese(
    demo: Namespace, live_server: Any, browser: Any
) -> None:
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    log_in(page, live_server.url, "root")
    page.goto(f"{live_server.url}/n/demo/quality/")
    assert CJK.search(page.locator("h1").inner_text())
    assert "Demo questions" in page.locator("#sets-heading + div, main").first.inner_text()
    assert axe_problems(page) == []
    context.close()
