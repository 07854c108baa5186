"""The playground in headless Chromium (Debian's, driven by Playwright): log in, assemble,
switch strategy, compare; the busy state of a slow assembly; and the same form without
JavaScript."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User

from apps.audit.actors import Actor
from apps.memories.services import NewMemory, memory_create
from apps.namespaces.services import namespace_create
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from tests.browser import csp_refusals, log_in, watch_console


@pytest.fixture
def seeded(transactional_db: None) -> None:
    User.objects.create_superuser("alice", "alice@example.com", "alice-password-1")
    actor = Actor.system("tests")
    namespace = namespace_create(actor=actor, slug="acme", name="Acme")
    memory_create(
        actor=actor,
        namespace=namespace,
        item=NewMemory(
            subject_external_id="u1", content="The user is vegetarian and allergic to peanuts."
        ),
    )
    messages_ingest(
        actor=actor, namespace=namespace, subject_external_id="u1", session_external_id="s1",
        messages=[IncomingMessage("user", "I am planning a dinner party for six friends."),
                  IncomingMessage("assistant", "Fun! Any dietary needs?")],
    )  # fmt: skip


def fill(page) -> None:  # type: ignore[no-untyped-def]
    page.select_option("#id_namespace", "acme")
    page.fill("#id_subject", "u1")
    page.fill("#id_session", "s1")
    page.fill("#id_query", "What should I cook for the party?")
    page.fill("#id_system_prompt", "You are a cooking assistant.")


def test_log_in_assemble_switch_strategy_and_compare(seeded: None, live_server, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    refused: list[str] = []  # what the Content-Security-Policy blocked, as the console says
    page.on("console", lambda message: refused.append(message.text))
    log_in(page, live_server.url, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/playground/")
    fill(page)
    page.select_option("#id_strategy", "buffer")
    page.click("button:has-text('Assemble')")
    result = page.locator("#result")
    result.get_by_text("Assembled prompt").wait_for()
    assert "(buffer, gpt-4o)" in result.inner_text()
    assert "The user is vegetarian and allergic to peanuts." in result.inner_text()
    assert page.locator(".token-bar rect").count() >= 3
    assert "What should I cook" not in page.url  # the text is posted, not in the address

    page.select_option("#id_strategy", "summary")
    page.click("button:has-text('Assemble')")
    page.locator("#result h2 small", has_text="summary").wait_for()  # "(summary, model)"
    # The summary stands for the turns it covers: they are not sent, but listed as dropped.
    sent = page.locator("#result .section.sec-turns").all_inner_texts()
    assert not any("I am planning a dinner party" in text for text in sent)
    dropped = page.locator("#result table.dropped tr", has_text="I am planning a dinner party")
    assert dropped.locator(".reason").inner_text() == "in the summary"

    page.check("#id_compare")
    page.click("button:has-text('Assemble')")
    page.locator(".compare .strategy").first.wait_for()
    strategies = page.locator(".compare .strategy h3").all_inner_texts()
    assert strategies == ["buffer", "window", "summary", "summary + buffer"]

    page.click("button:has-text('Save and share')")
    link = page.locator(".share-link")
    link.wait_for()
    shared = browser.new_page()  # another session: the link alone reproduces the comparison
    log_in(shared, live_server.url, "alice", "alice-password-1")
    shared.goto(link.get_attribute("href"))
    # The link fills the form (opening it runs nothing); one click reproduces the comparison.
    assert shared.input_value("#id_query") == "What should I cook for the party?"
    assert shared.locator(".compare .strategy").count() == 0
    shared.click("button:has-text('Assemble')")
    shared.locator(".compare .strategy").first.wait_for()
    assert shared.locator(".compare .strategy").count() == 4
    assert [text for text in refused if "Content Security Policy" in text] == []


def test_the_form_works_without_javascript(seeded: None, live_server, browser) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in(page, live_server.url, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/playground/")
    fill(page)
    page.click("button:has-text('Assemble')")
    page.wait_for_load_state()
    assert "Assembled prompt" in page.locator("#result").inner_text()
    context.close()


def held_back(page, held: list):  # type: ignore[no-untyped-def]
    """The one request the route holds, once Playwright has handed it over: the route's
    handler runs while the page's events are pumped, so wait for the condition, not a count
    of pauses (a loaded machine hands it over later)."""
    deadline = time.monotonic() + 60
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    assert len(held) == 1
    return held.pop()


def test_a_slow_assembly_disables_its_button_and_shows_it_is_working(  # type: ignore[no-untyped-def]
    seeded: None, live_server, browser
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    said = watch_console(page)
    log_in(page, live_server.url, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/playground/")
    fill(page)
    held: list = []  # the posted form, held back until the busy state has been seen
    page.route("**/playground/", lambda route: held.append(route))
    button = page.locator("button[name=assemble]")
    busy, result = page.locator("#busy"), page.locator("#result")

    page.click("button[name=assemble]")
    expect(button).to_be_disabled()
    expect(busy).to_have_text("Working…")  # shown once the request has taken over 300 ms
    expect(result).to_have_attribute("aria-busy", "true")
    held_back(page, held).continue_()
    result.get_by_text("Assembled prompt").wait_for()
    expect(button).to_be_enabled()
    expect(busy).to_be_empty()
    expect(busy).to_be_hidden()
    expect(page.locator("[aria-busy]")).to_have_count(0)

    page.click("button[name=assemble]")  # a failing answer ends the busy state too
    expect(busy).to_have_text("Working…")
    held_back(page, held).fulfill(status=500, body="Server error")
    expect(button).to_be_enabled()
    expect(busy).to_be_empty()
    expect(page.locator("[aria-busy]")).to_have_count(0)
    assert csp_refusals(said) == []


def test_the_demo_question_states_shellfish_and_as_of_before_the_correction_peanuts(  # type: ignore[no-untyped-def]
    transactional_db: None, live_server, browser
) -> None:
    """The demo's own playground question: the prompt's memories say shellfish and none says
    peanuts; as of the day before the correction, the same prompt says peanuts, and the page
    lists what differs from now."""
    from datetime import timedelta

    from apps.demo.services import demo_actor, demo_load
    from apps.memories.models import Kind, Memory
    from apps.memories.row_encryption import KeyCache, open_memory

    User.objects.create_superuser("alice", "alice@example.com", "alice-password-1")
    demo_load(actor=demo_actor())
    keys = KeyCache()
    ended = Memory.objects.filter(
        subject__external_id="demo-user-1", kind=Kind.SEMANTIC, valid_to__isnull=False
    )
    (peanuts,) = [fact for fact in ended if "peanut" in open_memory(keys, fact)]
    assert peanuts.valid_to is not None
    page = browser.new_page()
    said = watch_console(page)
    log_in(page, live_server.url, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/playground/")
    page.select_option("#id_namespace", "demo")
    page.fill("#id_subject", "demo-user-1")
    page.fill("#id_session", "demo-user-1-s3")
    page.fill("#id_query", "Which Harbour Kitchen class is safe for my allergy?")
    page.click("button:has-text('Assemble')")
    page.locator("#result").get_by_text("Assembled prompt").wait_for()
    memories = page.locator("#result .section.sec-memories li").all_inner_texts()
    assert any("The user is allergic to shellfish." in text for text in memories)
    assert [text for text in memories if "peanut" in text.lower()] == []

    day_before = (peanuts.valid_to - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    page.fill("#id_as_of", day_before)
    page.click("button:has-text('Assemble')")
    difference = page.locator("#result .as-of-difference")
    difference.wait_for()
    memories = page.locator("#result .section.sec-memories li").all_inner_texts()
    assert any("peanuts" in text for text in memories)
    assert not any("The user is allergic to shellfish." in text for text in memories)
    assert any("peanuts" in text for text in difference.locator(".then-only li").all_inner_texts())
    told_now = difference.locator(".now-only li").all_inner_texts()
    assert any("The user is allergic to shellfish." in text for text in told_now)

    page.fill("#id_as_of", "")
    page.check("#id_include_history")
    page.click("button:has-text('Assemble')")
    page.locator("#result li.history").first.wait_for()
    history = page.locator("#result .section.sec-memories li.history").all_inner_texts()
    assert any("(superseded " in text and "peanut" in text.lower() for text in history)
    assert csp_refusals(said) == []
