"""The privacy portal in headless Chromium (Debian's, driven by Playwright), as the person
would use it: the app's link, what is remembered, a correction, the export (the page and the
JSON file), the erasure and its receipt, in English and in Chinese; delete by topic; pause;
a phone-wide screen; axe-core and the CSP on every page; and the pages without JavaScript.

The story is conftest.py's, built with `transactional_db` so that the live server's thread
sees it. The phone test's screenshots (every page 375 px wide; the overview and the memories
page 1280 px wide too; English and Chinese) go to pytest's tmp_path, or to the folder named
by MEMORYHUB_PORTAL_SHOTS, to be kept."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from apps.audit.actors import Actor
from apps.governance.services import content_read_record
from apps.memories.models import DataKey, Memory, Subject
from apps.namespaces.services import namespace_update
from apps.privacy.models import PortalSession
from tests.browser import TIMEOUT_MS, axe_problems, csp_refusals, watch_console
from tests.conftest import Tenant
from tests.privacy.conftest import Story, allow_return, link_for, tell

APP = "https://app.example"
CJK = re.compile(r"[\u4e00-\u9fff]")
HASH = re.compile(r"^[0-9a-f]{64}$")
QUOTED = re.compile(r"[“「\"](.+?)[”」\"]")  # the words to type, as the erase label quotes them
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}
SUZHOU = "The user lives in Suzhou."


@pytest.fixture
def tale(transactional_db: None, acme: Tenant, story: Story) -> Story:
    """conftest's story, committed; the app may send people back to APP."""
    allow_return(acme, APP)
    return story


def enter(page: Any, base: str, tenant: Tenant, external_id: str = "u1", **body: Any) -> str:
    """Follow a portal link the app asked for, as the person would; the portal's home."""
    body.setdefault("return_url", f"{APP}/settings")
    link = link_for(tenant, external_id, **body)
    assert link["url"].startswith("http://testserver/portal/enter/"), link
    page.goto(base + link["url"].removeprefix("http://testserver"))
    page.wait_for_url(re.compile(r"/portal/[0-9a-f-]{36}/"))
    subject = Subject.objects.get(namespace=tenant.namespace, external_id=external_id)
    home = f"{base}/portal/{subject.pk}/"
    assert page.url.startswith(home)
    return home


def language_problem(page: Any, locale: str) -> str | None:
    """What is wrong with the page's language, if anything."""
    lang = page.locator("html").get_attribute("lang")
    if lang != locale:
        return f"{page.url}: lang={lang!r}"
    heading = page.locator("h1").first.inner_text()
    if locale == "zh-hans" and not CJK.search(heading):
        return f"{page.url}: the heading is not Chinese: {heading!r}"
    return None


def in_language(page: Any, locale: str) -> None:
    problem = language_problem(page, locale)
    assert problem is None, problem


def nav(page: Any, path: str) -> None:
    """Click the portal's top navigation link that leads to `path` (e.g. "memories/")."""
    page.locator(f"header nav a[href$='/{path}']").click()
    page.wait_for_url(re.compile(re.escape(path) + "$"))


def no_overflow(page: Any, width: int) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    if wide > width:
        culprits = page.evaluate(
            """(width) => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > width + 0.5)
            .slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' +
            Math.round(e.getBoundingClientRect().right))""",
            width,
        )
        pytest.fail(f"{page.url} is {wide}px wide at {width}px: {culprits}")


def full_flow(page: Any, base: str, acme: Tenant, tale: Story, locale: str) -> None:
    """Link → memories → one memory → correct → export → erase, then nothing is left."""
    english = locale == "en"
    said = watch_console(page)
    home = enter(page, base, acme, flow="overview", locale=locale)
    in_language(page, locale)
    subject_id = Subject.objects.get(namespace=acme.namespace, external_id="u1").pk
    assert page.locator("a.back").get_attribute("href") == f"{APP}/settings"

    # What is remembered, grouped by kind; the superseded fact kept apart as history.
    nav(page, "memories/")
    in_language(page, locale)
    for kind in ("semantic", "episodic", "procedural"):
        page.locator(f"h2#kind-{kind}").wait_for()
    facts = page.locator("section:has(h2#kind-semantic)")
    assert "The user lives in Shanghai" in facts.inner_text()
    assert "The user lives in Hangzhou" not in page.locator("main").inner_text()
    rules = page.locator("section:has(h2#kind-procedural)").inner_text()
    assert "Answer in short bullet points." in rules
    if english:
        assert page.inner_text("h1") == "What we remember about you"
        assert "Facts and preferences" in page.inner_text("h2#kind-semantic")
        assert "How you want to be answered" in page.inner_text("h2#kind-procedural")

    # One memory: where it came from, then a correction.
    facts.locator("li", has_text="The user lives in Shanghai").locator("a").click()
    page.wait_for_url(f"{home}memories/{tale.fact.pk}/")
    in_language(page, locale)
    assert "The user lives in Shanghai" in page.locator("main .card .content").first.inner_text()
    page.fill("#id_content", SUZHOU)
    page.locator("#correct button[type=submit]").click()
    page.wait_for_url(f"{home}memories/{tale.fact.pk}/")
    page.locator(".messages li").wait_for()
    assert page.locator("main .card .content").first.inner_text() == SUZHOU
    earlier = page.locator("main section.card:has(ol)").last.inner_text()
    assert SUZHOU not in earlier  # what it says now is no earlier wording
    assert "The user lives in Shanghai" in earlier  # the earlier wording, in the history
    if english:
        assert "Corrected. The earlier wording stays in its history." in page.inner_text(
            ".messages"
        )
        assert "Corrected\nby you" in page.inner_text("dl.fields")
        assert "Earlier wordings" in earlier
    nav(page, "memories/")
    corrected = page.locator("section:has(h2#kind-semantic) li", has_text=SUZHOU)
    assert corrected.locator(".badge.status-active").count() == 1  # "corrected by you"
    if english:
        assert "corrected by you" in corrected.inner_text()

    # Export: the printable page, then the JSON file.
    nav(page, "export/")
    in_language(page, locale)
    page.locator("a[href$='/export/print/']").click()
    page.wait_for_url(f"{home}export/print/")
    in_language(page, locale)
    printed = page.inner_text("main")
    assert SUZHOU in printed
    assert "The user lives in Hangzhou" in printed
    assert "Answer in short bullet points." in printed
    page.go_back()
    page.wait_for_url(f"{home}export/")
    download_link = page.locator("a[href$='/export/json/']")
    if english:
        assert download_link.inner_text() == "Download the file"
    with page.expect_download() as caught:
        download_link.click()
    download = caught.value
    assert re.fullmatch(r"my-memories-\d{4}-\d{2}-\d{2}\.json", download.suggested_filename)
    document = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert "$schema" in document
    contents = {row["content"] for row in document["memories"]}
    assert SUZHOU in contents
    assert "The user keeps bees." not in contents  # another person's

    # Erase: the typed words, as the label shows them; then the receipt.
    nav(page, "erase/")
    in_language(page, locale)
    label = page.locator("label[for=id_confirmation]").inner_text()
    words = re.search(QUOTED, label)
    assert words, label
    if english:
        assert words.group(1) == "erase everything"
    else:
        assert CJK.search(words.group(1)), f"the words to type are not Chinese: {label!r}"
    page.fill("#id_confirmation", words.group(1))
    page.locator("main form button.danger[type=submit]").click()
    receipt = page.locator(".receipt")
    receipt.wait_for()
    in_language(page, locale)
    if english:
        assert "Receipt number" in receipt.inner_text()
    assert HASH.match(page.inner_text("dd.hash").strip())
    # Nothing is left to visit: no links to the session's pages, no language to switch.
    assert page.locator("header nav, header form, footer form").count() == 0
    assert page.locator("main a.button.return").get_attribute("href") == f"{APP}/settings"

    assert Memory.objects.filter(subject_id=subject_id).count() == 0
    assert not DataKey.objects.filter(subject_id=subject_id).exists()
    assert not Subject.objects.filter(pk=subject_id).exists()
    assert not PortalSession.objects.filter(subject_id=subject_id).exists()
    assert Memory.objects.filter(pk=tale.other.pk).exists()  # u2 keeps their bees
    response = page.goto(home)  # the session went with the subject
    assert response is not None
    assert response.status == 404
    assert csp_refusals(said) == []


def test_a_person_sees_corrects_exports_and_erases_in_english(
    tale: Story, acme: Tenant, live_server: Any, context: Any
) -> None:
    full_flow(context.new_page(), live_server.url, acme, tale, "en")


def test_a_person_does_it_all_in_chinese(
    tale: Story, acme: Tenant, live_server: Any, context: Any
) -> None:
    full_flow(context.new_page(), live_server.url, acme, tale, "zh-hans")


def test_it_passes_axe_and_the_csp_on_every_portal_page(
    tale: Story, acme: Tenant, live_server: Any, context: Any
) -> None:
    # Something for the "kept out" page's table: an e-mail address redacted from a turn.
    namespace_update(actor=Actor.system("tests"), namespace=acme.namespace, pii_policy="redact")
    acme.namespace.refresh_from_db()
    tell(acme, "u1", "Mail me at mei.lin@example.com please.", session="s4")
    base = live_server.url
    page = context.new_page()
    said = watch_console(page)
    home = enter(page, base, acme)
    problems: list[str] = []
    seen: list[str] = []

    def check(name: str, url: str | None = None, status: int = 200) -> None:
        if url is not None:
            response = page.goto(url)
            assert response is not None
            assert response.status == status, (name, response.status)
        page.wait_for_load_state("load")
        seen.append(name)
        problems.extend(f"{name}: {problem}" for problem in axe_problems(page))
        # No internal id: the app's names for its sessions ("s2") mean nothing to a person.
        assert not re.search(r"\bs[1-4]\b", page.locator("main").inner_text()), name

    check("overview")
    check("memories, grouped", f"{home}memories/")
    page.fill("#id_q", "Shanghai")
    page.click("form.search button[type=submit]")
    page.locator("#results-title").wait_for()
    check("memories, search results (htmx)")
    check("memories of one kind", f"{home}memories/?kind=semantic")
    check("history", f"{home}memories/?kind=history")
    check("memory", f"{home}memories/{tale.fact.pk}/")
    check("memory no longer current", f"{home}memories/{tale.old.pk}/")
    check("delete confirmation", f"{home}memories/{tale.fact.pk}/delete/")
    check("forget", f"{home}forget/")
    page.fill("#id_q", "Shanghai")
    page.locator("main form button[type=submit]").first.click()
    page.locator("#matches-title").wait_for()
    assert page.locator("input[type=checkbox][name=memory]").count() >= 1
    check("forget, the matches")
    check("export", f"{home}export/")
    check("printable export", f"{home}export/print/")
    check("erase", f"{home}erase/")
    page.fill("#id_confirmation", "no")
    page.locator("main form button.danger").click()
    page.locator("main .error").wait_for()
    check("erase, wrong words")
    check("pause", f"{home}pause/")
    check("activity", f"{home}activity/")
    check("blocked", f"{home}blocked/")
    assert page.locator("main table tbody tr").count() >= 1
    check("refused link", f"{base}/portal/enter/no-such-token", status=404)
    again = base + link_for(acme, "u1")["url"].removeprefix("http://testserver")
    page.goto(again)
    page.wait_for_url(f"{home}")
    check("used link", again, status=410)
    check("not found", f"{base}/portal/{tale.other.subject_id}/", status=404)
    page.goto(f"{home}pause/")
    page.locator("main form button[type=submit]").click()
    page.locator(".messages li").wait_for()
    check("paused")
    page.locator("footer form button[type=submit]").click()
    page.wait_for_load_state("load")
    assert page.locator("header nav, footer form").count() == 0
    check("left")

    assert len(seen) == 22
    assert problems == [], "axe found serious or critical violations:\n" + "\n".join(problems)
    refused = csp_refusals(said)
    assert refused == [], "the Content-Security-Policy refused:\n" + "\n".join(refused)


@pytest.mark.parametrize("locale", ["en", "zh-hans"])
def test_it_fits_a_375_px_phone(
    tale: Story, acme: Tenant, live_server: Any, browser: Any, tmp_path: Path, locale: str
) -> None:
    record = os.environ.get("MEMORYHUB_PORTAL_SHOTS")
    shots = Path(record) if record else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    tag = "en" if locale == "en" else "zh"
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(TIMEOUT_MS)

    def shoot(name: str, width: int) -> None:
        page.screenshot(path=shots / f"{name}-{tag}-{width}.png", full_page=True)
        no_overflow(page, width)
        problem = language_problem(page, locale)
        if problem:
            wrong_language.append(problem)

    wrong_language: list[str] = []
    try:
        page = context.new_page()
        home = enter(page, live_server.url, acme, locale=locale)
        pages = {
            "overview": home,
            "memories": f"{home}memories/",
            "memory": f"{home}memories/{tale.fact.pk}/",
            "history": f"{home}memories/?kind=history",
            "forget": f"{home}forget/",
            "export": f"{home}export/",
            "print": f"{home}export/print/",
            "activity": f"{home}activity/",
            "erase": f"{home}erase/",
        }
        for name, url in pages.items():
            page.goto(url)
            shoot(name, PHONE["width"])
        page.goto(f"{home}forget/")
        page.fill("#id_q", "Shanghai")
        page.locator("main form button[type=submit]").first.click()
        page.locator("#matches-title").wait_for()
        shoot("forget-matches", PHONE["width"])
        # For the record: the overview and the memories page on a desktop, too.
        page.set_viewport_size(DESKTOP)
        for name in ("overview", "memories"):
            page.goto(pages[name])
            shoot(name, DESKTOP["width"])
        # Last, the receipt, with its long number.
        page.set_viewport_size(PHONE)
        page.goto(pages["erase"])
        words = re.search(QUOTED, page.locator("label[for=id_confirmation]").inner_text())
        assert words
        page.fill("#id_confirmation", words.group(1))
        page.locator("main form button.danger[type=submit]").click()
        page.locator(".receipt").wait_for()
        shoot("erased", PHONE["width"])
    finally:
        context.close()
    assert (shots / f"memories-{tag}-375.png").stat().st_size > 0
    assert wrong_language == [], "\n".join(wrong_language)


def test_it_deletes_by_topic_only_what_stays_ticked(
    tale: Story, acme: Tenant, live_server: Any, context: Any
) -> None:
    page = context.new_page()
    said = watch_console(page)
    home = enter(page, live_server.url, acme)
    subject = Subject.objects.get(namespace=acme.namespace, external_id="u1")
    before = Memory.objects.filter(subject=subject).count()
    page.goto(f"{home}forget/")
    page.fill("#id_q", "Shanghai")
    page.get_by_role("button", name="Find them").click()
    page.locator("#matches-title").wait_for()
    boxes = page.locator("input[type=checkbox][name=memory]")
    matched = boxes.evaluate_all("boxes => boxes.map(box => box.value)")
    assert len(matched) >= 2, page.inner_text("main")
    assert all(boxes.nth(i).is_checked() for i in range(len(matched)))
    assert str(tale.fact.pk) in matched
    assert str(tale.rule.pk) not in matched  # not about Shanghai
    keep = page.locator("li", has_text="The user lives in Shanghai").locator("input")
    kept = keep.get_attribute("value")
    keep.uncheck()
    page.get_by_role("button", name="Delete the ticked memories").click()
    page.wait_for_url(f"{home}memories/")
    gone = len(matched) - 1
    said = f"Deleted {gone} memory." if gone == 1 else f"Deleted {gone} memories."
    assert said in page.inner_text(".messages")

    assert Memory.objects.filter(pk=kept).exists()
    assert not Memory.objects.filter(pk__in=[pk for pk in matched if pk != kept]).exists()
    assert Memory.objects.filter(subject=subject).count() == before - gone
    assert Memory.objects.filter(pk=tale.rule.pk).exists()
    assert "The user lives in Shanghai" in page.inner_text("main")
    assert csp_refusals(said) == []


def test_pausing_in_the_portal_stops_the_app_remembering(
    tale: Story,
    acme: Tenant,
    live_server: Any,
    context: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    page = context.new_page()
    said = watch_console(page)
    home = enter(page, live_server.url, acme, flow="pause")
    assert page.url == f"{home}pause/"
    page.get_by_role("button", name="Pause memory").click()
    page.get_by_role("heading", name="Memory is paused").wait_for()
    assert "Memory paused: nothing new is remembered about you." in page.inner_text(".messages")
    subject = Subject.objects.get(namespace=acme.namespace, external_id="u1")
    assert subject.paused
    before = Memory.objects.filter(subject=subject).count()

    body = {
        "subject": "u1",
        "session": "s3",
        "messages": [{"role": "user", "content": "I have a dog named Max."}],
    }
    with django_capture_on_commit_callbacks(execute=True):
        sent = acme.client.post(acme.url("messages"), body, format="json")
    assert sent.status_code in (201, 202), sent.json()
    job = acme.client.get(f"/api/v1/jobs/{sent.json()['id']}").json()
    assert job["result"]["skipped"] == "paused", job
    refused = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "The user has a dog."}, format="json"
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "subject_paused"
    assert Memory.objects.filter(subject=subject).count() == before

    page.goto(home)  # the overview says so, and offers to resume
    assert page.locator("main .card.warning a[href$='/pause/']").count() == 1
    assert csp_refusals(said) == []


def test_it_searches_and_corrects_without_javascript(
    tale: Story, acme: Tenant, live_server: Any, browser: Any
) -> None:
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        home = enter(page, live_server.url, acme, flow="memories")
        assert page.url == f"{home}memories/"
        page.fill("#id_q", "Shanghai")
        page.click("form.search button[type=submit]")
        page.locator("#results-title").wait_for()
        assert page.url == f"{home}memories/"  # POSTed: the words are not in the address
        assert page.locator("html").get_attribute("lang") == "en"  # the whole page came back
        assert page.locator("header nav").count() == 1
        assert "memories found" in page.inner_text("#results-title")
        hit = page.locator("#results li", has_text="The user lives in Shanghai")
        hit.locator("a").click()
        page.wait_for_url(f"{home}memories/{tale.fact.pk}/")
        page.fill("#id_content", SUZHOU)
        page.click("#correct button[type=submit]")
        page.wait_for_url(f"{home}memories/{tale.fact.pk}/")
        assert page.locator("main .card .content").first.inner_text() == SUZHOU
        assert "Corrected. The earlier wording stays" in page.inner_text(".messages")
    finally:
        context.close()
    tale.fact.refresh_from_db()
    assert tale.fact.version == 2


def test_who_used_them_by_day_and_the_receipt_fetched_again(
    tale: Story, acme: Tenant, alice: Any, live_server: Any, browser: Any, context: Any
) -> None:
    """An administrator's views of a day are one entry listing what they viewed; after the
    erasure, the receipt's address opens it in another browser, and its file downloads."""
    for memory in (tale.rule, tale.rule, tale.fact):
        content_read_record(
            actor=Actor.for_user(alice),
            namespace=acme.namespace,
            what="memory",
            memory_ids=[memory.pk],
        )
    base = live_server.url
    page = context.new_page()
    said = watch_console(page)
    enter(page, base, acme)
    nav(page, "activity/")
    (viewed,) = page.locator("li.card.viewed").all()
    text = viewed.inner_text()
    assert "3 times" in text
    assert "a memory's page × 3" in text
    assert viewed.locator("ul.used li").count() == 2  # two memories, each listed once
    assert "The user keeps bees." not in page.inner_text("main")
    problems = axe_problems(page)

    nav(page, "erase/")
    page.fill("#id_confirmation", "erase everything")
    page.locator("main form button.danger[type=submit]").click()
    page.locator(".receipt").wait_for()
    number = page.inner_text("dd.hash").strip()
    address = page.locator("#id_receipt_url").input_value()
    assert address.startswith(f"{base}/portal/receipts/")
    problems += axe_problems(page)

    stranger = browser.new_context()  # later, elsewhere: no cookie, only the address
    try:
        later = stranger.new_page()
        response = later.goto(address)
        assert response is not None
        assert response.status == 200
        assert later.inner_text("dd.hash").strip() == number
        assert "Checked: the receipt number matches" in later.inner_text("main")
        problems += axe_problems(later)
        with later.expect_download() as caught:
            later.locator("a[download]").click()
        document = json.loads(Path(caught.value.path()).read_text(encoding="utf-8"))
        assert document["receipt_number"] == number
    finally:
        stranger.close()
    assert problems == [], "axe found serious or critical violations:\n" + "\n".join(problems)
    assert csp_refusals(said) == []
