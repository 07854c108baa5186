"""The governance dashboard in headless Chromium (Debian's, driven by Playwright): search,
open and edit a memory; the review queue's keyboard; a purge by filter to its receipt; an
outsider's 404s; axe-core on every page; and the pages that must work without JavaScript.

The cast is the one of conftest.py (olive owns acme, eddie edits, vera views; oscar is only in
globex), built here with `transactional_db` so that the live server's thread sees it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from apps.audit.actors import Actor
from apps.memories.models import Memory, Status
from apps.namespaces.services import membership_set
from tests.browser import PASSWORD, TIMEOUT_MS, axe_problems, csp_refusals, log_in, watch_console
from tests.governance.conftest import Cast, build_cast


@pytest.fixture
def cast(transactional_db: None) -> Cast:
    """conftest's cast, committed (the extraction of the conversation runs, too), with
    passwords: these tests log in through the form."""
    return build_cast(password=PASSWORD)


def test_it_searches_opens_edits_and_shows_the_change_as_a_diff(
    cast: Cast, live_server: Any, context: Any
) -> None:
    base = live_server.url
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "eddie")
    page.goto(f"{base}/n/acme/memories/")
    page.fill("#id_q", "jasmine tea")
    page.click("form.search button[type=submit]")
    page.locator("#results h2", has_text="hit").wait_for()
    assert "jasmine" not in page.url  # the query is POSTed, not put in the address

    page.locator("#results a", has_text="The user likes jasmine green tea.").click()
    page.wait_for_url(f"{base}/n/acme/memories/{cast.fact.pk}/")
    page.click("a.button:has-text('Edit')")
    page.wait_for_url(f"{base}/n/acme/memories/{cast.fact.pk}/edit/")
    assert page.input_value("#id_content") == "The user likes jasmine green tea."
    page.fill("#id_content", "The user likes jasmine oolong tea.")
    page.fill("#id_reason", "it is oolong")
    page.click("button:has-text('Save')")
    page.wait_for_url(f"{base}/n/acme/memories/{cast.fact.pk}/")

    assert page.inner_text("#memory-content") == "The user likes jasmine oolong tea."
    newest = page.locator("ol.versions li.version").first
    assert "it is oolong" in newest.locator(".meta").inner_text()
    assert newest.locator(".diff ins").all_inner_texts() == ["oolong"]
    assert newest.locator(".diff del").all_inner_texts() == ["green"]
    assert newest.locator(".diff").inner_text().startswith("The user likes jasmine ")
    cast.fact.refresh_from_db()
    assert cast.fact.version == 3
    assert csp_refusals(said) == []


def test_it_approves_the_focused_review_item_with_the_keyboard(
    cast: Cast, live_server: Any, context: Any
) -> None:
    base = live_server.url
    page = context.new_page()
    said = watch_console(page)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    log_in(page, base, "eddie")
    page.goto(f"{base}/n/acme/review/")
    page.wait_for_load_state("load")

    page.keyboard.press("j")
    focused = page.locator(".queue-item:focus")
    focused.wait_for()
    # The first item: the pending one, named by its section and whose memory it is.
    subject = cast.pending.subject.external_id if cast.pending.subject else ""
    label = focused.get_attribute("aria-label") or ""
    assert label == f"Pending review: a memory of {subject}", label
    assert focused.locator(f"a[href$='/memories/{cast.pending.pk}/']").count() == 1

    page.keyboard.press("a")
    done = page.locator(".queue-item.done[data-done='approve']")
    done.wait_for()
    # Named by whose memory it is, not by its id.
    assert f"a memory of {subject}" in done.inner_text()
    assert str(cast.pending.pk) not in done.inner_text()
    open_items = page.locator(f".queue-item:not(.done) a[href$='/memories/{cast.pending.pk}/']")
    assert open_items.count() == 0
    memory = Memory.objects.get(pk=cast.pending.pk)
    assert memory.status == Status.ACTIVE
    assert memory.metadata.get("reviewed_at")
    # The focus moved on to the next open item.
    page.locator(".queue-item:not(.done):focus").wait_for()

    # A key typed into a field is text, not a shortcut: the page has no field of its own, so
    # put one inside the focused item (where `a` would otherwise approve it).
    page.evaluate(
        """() => { document.activeElement.id = 'typed-into';
        const field = document.createElement('input');
        field.id = 'typing'; field.setAttribute('aria-label', 'typing');
        document.activeElement.appendChild(field); field.focus(); }"""
    )
    approvals = len(posts)
    # Record, in the page, every click and every request htmx starts: a key taken as a
    # shortcut clicks its control, whose request htmx starts, within the key's own handlers.
    page.evaluate(
        """() => { window.started = [];
        for (const name of ['click', 'submit', 'htmx:beforeRequest'])
          document.addEventListener(name, () => window.started.push(name), true); }"""
    )
    page.keyboard.type("aj?")
    # The keys' handlers have all run before this evaluation, which the page runs after them.
    assert page.evaluate("window.started") == []
    assert len(posts) == approvals, posts[approvals:]
    assert page.input_value("#typing") == "aj?"
    assert page.locator(".queue-item.done").count() == 1
    assert page.locator(".queue-item#typed-into:not(.done)").count() == 1
    assert not page.locator("#shortcuts").evaluate("dialog => dialog.open")

    # `?` (outside a field) opens the shortcuts; Escape closes them.
    page.locator("#typed-into").focus()
    page.keyboard.press("?")
    page.locator("#shortcuts").wait_for(state="visible")
    assert page.locator("#shortcuts").evaluate("dialog => dialog.open")
    assert "approve" in page.locator("#shortcuts").inner_text()
    page.keyboard.press("Escape")
    page.locator("#shortcuts").wait_for(state="hidden")
    assert csp_refusals(said) == []


def test_it_purges_what_a_filter_matches_and_shows_the_receipt(
    cast: Cast, live_server: Any, context: Any
) -> None:
    base = live_server.url
    episodic = Memory.objects.filter(namespace=cast.acme, kind="episodic")
    expected = episodic.count()
    assert expected >= 2  # the conversation's turns
    others = set(
        Memory.objects.filter(namespace=cast.acme)
        .exclude(kind="episodic")
        .values_list("pk", flat=True)
    )
    assert cast.fact.pk in others
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")
    page.goto(f"{base}/n/acme/memories/?kind=episodic")
    page.click("a:has-text('Purge everything this filter matches…')")
    page.wait_for_url(re.compile(r"/n/acme/memories/purge/\?kind=episodic$"))
    dry_run = int(page.inner_text("#purge-count"))
    assert dry_run == expected

    page.fill("#id_reason", "the conversation was imported by mistake")
    page.fill("#id_confirmation", "acme")
    page.click(f"button:has-text('Purge {dry_run} memories')")
    page.wait_for_url(re.compile(r"/n/acme/jobs/[^/]+/$"))
    page.locator("#receipt-memories").wait_for()
    assert int(page.inner_text("#receipt-memories")) == dry_run
    assert "the conversation was imported by mistake" in page.inner_text(".receipt")

    assert not episodic.exists()
    assert set(Memory.objects.filter(namespace=cast.acme).values_list("pk", flat=True)) == others
    assert Memory.objects.filter(pk=cast.other_tenant_memory.pk).exists()
    assert csp_refusals(said) == []


def test_it_shows_an_outsider_the_404_page(cast: Cast, live_server: Any, context: Any) -> None:
    base = live_server.url
    page = context.new_page()
    log_in(page, base, "oscar")
    for path in (
        "/n/acme/memories/",
        f"/n/acme/memories/{cast.fact.pk}/",
        "/n/acme/review/",
    ):
        response = page.goto(f"{base}{path}")
        assert response is not None
        assert response.status == 404, path
        assert page.inner_text("h1") == "Not found", path
        assert "jasmine" not in page.content(), path
        assert "Acme" not in page.inner_text("main"), path


def test_it_passes_axe_and_the_csp_on_every_governance_page(
    cast: Cast, live_server: Any, context: Any
) -> None:
    # A second namespace for olive, so that /memories/ shows its list instead of redirecting.
    membership_set(
        actor=Actor.system("tests"), namespace=cast.globex, user=cast.users["olive"], role="viewer"
    )
    base = live_server.url
    acme = f"{base}/n/acme"
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")
    problems: list[str] = []
    seen: list[str] = []

    def check(name: str, path: str | None = None) -> None:
        if path is not None:
            response = page.goto(path if path.startswith("http") else f"{base}{path}")
            assert response is not None
            assert response.status == 200, (name, response.status)
        page.wait_for_load_state("load")
        seen.append(name)
        problems.extend(f"{name}: {problem}" for problem in axe_problems(page))

    check("namespace picker", "/memories/")
    assert page.locator("a", has_text="Globex").count() == 1
    check("explorer", f"{acme}/memories/")
    page.fill("#id_q", "tea")
    page.click("form.search button[type=submit]")
    page.locator("#results h2", has_text="hit").wait_for()
    check("explorer with search results")
    memory = f"{acme}/memories/{cast.fact.pk}"
    check("memory detail", f"{memory}/")
    check("memory edit", f"{memory}/edit/")
    check("memory delete confirmation", f"{memory}/delete/")
    check("review queue", f"{acme}/review/")
    page.locator(".queue-item").first.focus()
    page.keyboard.press("?")
    page.locator("#shortcuts").wait_for(state="visible")
    check("review queue, shortcuts open")
    check("subjects", f"{acme}/subjects/")
    check("subject", f"{acme}/subjects/{cast.subject_id}/")
    check("subject erase confirmation", f"{acme}/subjects/{cast.subject_id}/erase/")
    check("purge dry run", f"{acme}/memories/purge/?kind=episodic")
    page.fill("#id_reason", "a11y")
    page.fill("#id_confirmation", "acme")
    page.click("button.danger:has-text('Purge')")
    page.wait_for_url(re.compile(r"/n/acme/jobs/[^/]+/$"))
    page.locator("#receipt-memories").wait_for()
    check("purge receipt")
    page.goto(f"{acme}/memories/")
    page.locator("#results input[name=ids]").first.check()
    page.select_option("#id_bulk_action", "archive")
    page.click("button:has-text('Review…')")
    page.locator("#id_reason").wait_for()
    check("bulk action review")
    page.goto(f"{acme}/subjects/{cast.subject_id}/erase/")
    page.fill("#id_confirmation", "u1")
    page.click("button:has-text('Erase for good')")
    page.locator(".receipt").wait_for()
    check("subject erased receipt")

    assert len(seen) == 15
    assert problems == [], "axe found serious or critical violations:\n" + "\n".join(problems)
    refused = csp_refusals(said)
    assert refused == [], "the Content-Security-Policy refused:\n" + "\n".join(refused)


def test_it_filters_and_approves_without_javascript(
    cast: Cast, live_server: Any, browser: Any
) -> None:
    base = live_server.url
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        log_in(page, base, "eddie")
        page.goto(f"{base}/n/acme/memories/")
        page.click("details.fold > summary")  # folded without the script that opens it wide
        page.select_option("#id_kind", "episodic")
        page.click("form.filters button[type=submit]")
        page.wait_for_url(re.compile(r"/n/acme/memories/\?.*kind=episodic"))
        kinds = page.locator("#results table.memories tbody .badge[class*='kind-']")
        episodic = Memory.objects.filter(namespace=cast.acme, kind="episodic").count()
        assert kinds.count() == episodic
        assert set(kinds.evaluate_all("nodes => nodes.map(n => n.className)")) == {
            "badge kind-episodic"
        }

        page.goto(f"{base}/n/acme/review/")
        item = page.locator(f".queue-item[data-memory='{cast.pending.pk}']")
        item.locator("button[value=approve]").click()
        page.wait_for_load_state()
        assert page.url == f"{base}/n/acme/review/"  # posted, then redirected back
        assert "Done: Approve." in page.inner_text(".messages")
        assert page.locator(f".queue-item[data-memory='{cast.pending.pk}']").count() == 0
        memory = Memory.objects.get(pk=cast.pending.pk)
        assert memory.status == Status.ACTIVE
        assert memory.metadata.get("reviewed_at")
    finally:
        context.close()


def test_it_searches_within_the_filters_applied_in_place(
    cast: Cast, live_server: Any, context: Any
) -> None:
    """The search box promises hits "within the filters above": also after the filters were
    applied by htmx (which swaps only the results), not only after a full page load."""
    base = live_server.url
    page = context.new_page()
    log_in(page, base, "eddie")
    page.goto(f"{base}/n/acme/memories/")
    page.select_option("#id_kind", "episodic")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r"kind=episodic"))
    page.locator("#results .count").wait_for()
    page.fill("#id_q", "tea")
    page.click("form.search button[type=submit]")
    page.locator("#results h2", has_text="hit").wait_for()
    kinds = page.locator("#results table.memories tbody .badge[class*='kind-']")
    found = kinds.evaluate_all("nodes => nodes.map(n => n.className)")
    assert set(found) <= {"badge kind-episodic"}, (
        "the search ignored the kind filter applied in place: "
        + "; ".join(page.locator("#results tbody tr td:first-child a").all_inner_texts())
    )
