"""The audit log speaks in names, in headless Chromium, in English and Chinese, at desktop and
phone width: a memory's event names whose memory it is and links to it, an erased subject
shows its receipt's fingerprint, the subject filter suggests external ids and takes one
typed in full, a viewer sees no external id, and the integrity box counts what the list
counts. axe-core finds no serious or critical violation."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from apps.audit.models import AuditEvent
from apps.audit.services import audit_record, chain_verification_run
from apps.memories.models import Memory, Subject
from apps.memories.services.memories import NewMemory, memory_create
from apps.memories.services.subjects import subject_erase
from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console
from tests.dashboard.audit.conftest import ACTOR, AuditCast, build_audit_cast
from tests.privacy.test_browser import DESKTOP, PHONE, no_overflow

SAID = {
    "en": {
        "memory": "semantic memory of demo-user-1",
        "viewer memory": "semantic memory of a subject",
        "erased": "erased subject",
        "count": "1–{shown} of {total}",
        "box": "Checked {checked} of {total} events of acme's chain: intact. "
        "The newest was written after the check began.",
        "box filtered": "events of acme's chain that match the filters: intact.",
    },
    "zh-hans": {
        "memory": "demo-user-1 的语义记忆",
        "viewer memory": "某个主体的语义记忆",
        "erased": "已抹除的主体",
        "count": "第 1–{shown} 条，共 {total} 条",
        "box": "已检查 acme 的链中 {total} 个事件里的 {checked} 个：完好。"
        "最新的 1 个是在检查开始后写入的。",
        "box filtered": "acme 的链（经筛选）",
    },
}


@pytest.fixture
def cast(transactional_db: None) -> AuditCast:
    return build_audit_cast(password=PASSWORD)


def _seed(cast: AuditCast) -> dict[str, Any]:
    """A memory of demo-user-1, an erased subject's events, a full walk, then one event
    written after it."""
    for who in ("demo-user-1", "gone-user"):
        memory_create(
            actor=ACTOR,
            namespace=cast.acme,
            item=NewMemory(content=f"{who} drinks tea", subject_external_id=who),
        )
    receipt = subject_erase(
        actor=ACTOR, subject=Subject.objects.get(external_id="gone-user"), via="dashboard"
    )
    chain_verification_run(requested_by="beat", full=True)
    audit_record(actor=ACTOR, action="test.after_the_check", namespace=cast.acme)
    memory = Memory.objects.get(subject__external_id="demo-user-1")
    return {"fingerprint": receipt.subject_fingerprint, "memory_id": str(memory.pk)}


def _context(browser: Any, size: dict[str, int], locale: str) -> Any:
    context = browser.new_context(viewport=size, locale="zh-CN" if locale != "en" else "en")
    context.set_default_timeout(10_000)
    return context


@pytest.mark.parametrize("locale", ["en", "zh-hans"])
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_log_speaks_in_names_and_its_counts_agree(
    cast: AuditCast, live_server: Any, browser: Any, tmp_path: Path, locale: str, size: str
) -> None:
    seeded = _seed(cast)
    said = SAID[locale]
    viewport = DESKTOP if size == "desktop" else PHONE
    shots = Path(os.environ.get("MEMORYHUB_AUDIT_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    context = _context(browser, viewport, locale)
    page = context.new_page()
    console = watch_console(page)
    log_in(page, base, "olive")
    page.goto(f"{base}/audit/")
    problems = axe_problems(page)

    memory_link = page.locator("#results td.object a", has_text=said["memory"]).first
    assert memory_link.get_attribute("href") == f"/n/acme/memories/{seeded['memory_id']}/"
    erased = page.locator("#results td.object", has_text=said["erased"]).first
    assert seeded["fingerprint"][:16] in erased.inner_text()
    assert "gone-user" not in page.inner_text("main")

    total = AuditEvent.objects.filter(namespace_id=cast.acme.pk).count()
    count = page.inner_text("#results .count")
    assert count == said["count"].format(shown=min(total, 50), total=total)
    box = page.inner_text("#integrity")
    assert box == said["box"].format(checked=total - 1, total=total)
    no_overflow(page, viewport["width"])
    page.screenshot(path=shots / f"audit-log-{locale}-{size}.png", full_page=True)

    # The subject filter suggests the namespace's external ids as one types. On a phone the
    # filters are folded under their summary, above the list, until opened.
    if size == "phone":
        assert not page.locator("#id_subject").is_visible()
        page.locator("#filters summary").click()
    page.select_option("#id_namespace", "acme")
    page.locator("#id_subject").press_sequentially("demo")
    page.locator('#subject-suggestions option[value="demo-user-1"]').wait_for(state="attached")
    page.fill("#id_subject", "demo-user-1")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r"subject=demo-user-1"))
    page.locator("#integrity", has_text=said["box filtered"]).wait_for()
    subject_id = Subject.objects.get(external_id="demo-user-1").pk
    listed = AuditEvent.objects.filter(namespace_id=cast.acme.pk, subject_id=subject_id).count()
    assert page.locator("#results tbody tr").count() == listed
    assert page.inner_text("#results .count") == said["count"].format(shown=listed, total=listed)
    page.reload()  # the filter in the address, without the suggestions
    assert page.input_value("#id_subject") == "demo-user-1"
    assert page.locator("#results tbody tr").count() == listed
    problems += axe_problems(page)
    page.screenshot(path=shots / f"audit-filtered-{locale}-{size}.png", full_page=True)

    page.goto(f"{base}/audit/{seeded_event(seeded)}/")
    problems += axe_problems(page)
    context.close()

    # A viewer: the same events, the labels without the external ids.
    context = _context(browser, viewport, locale)
    page = context.new_page()
    log_in(page, base, "vera")
    page.goto(f"{base}/audit/")
    main = page.inner_text("main")
    assert said["viewer memory"] in main
    assert "demo-user-1" not in main
    assert page.locator("#id_subject").get_attribute("list") is None
    assert page.locator("#integrity").inner_text() == box
    no_overflow(page, viewport["width"])
    problems += axe_problems(page)
    page.screenshot(path=shots / f"audit-viewer-{locale}-{size}.png", full_page=True)
    context.close()
    assert problems == [], "axe found serious or critical violations:\n" + "\n".join(problems)
    assert csp_refusals(console) == []


def seeded_event(seeded: dict[str, Any]) -> int:
    """The memory's creation event (its page shows the same labels)."""
    return AuditEvent.objects.get(action="memory.create", object_id=seeded["memory_id"]).pk
