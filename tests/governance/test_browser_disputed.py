"""A disputed fact resolved with the keyboard, in English and in Chinese (headless Chromium):
the review queue shows it beside the turn that put it in doubt; `c` confirms it, `x` ends it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from apps.audit.actors import Actor
from apps.memories.models import Memory, Status
from apps.namespaces.services import membership_set, namespace_create
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.jobs import ingest_job_run
from apps.pipeline.models import JobStatus
from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console

ACTOR = Actor.system("tests")


def say(namespace: Any, subject: str, text: str) -> None:
    job, _ = messages_ingest(
        actor=ACTOR,
        namespace=namespace,
        subject_external_id=subject,
        session_external_id=f"{subject}-s",
        messages=[IncomingMessage("user", text)],
    )
    job.refresh_from_db()
    if job.status != JobStatus.SUCCEEDED:
        ingest_job_run(job_id=str(job.id))


@pytest.fixture
def disputed(transactional_db: None) -> dict[str, Memory]:
    namespace = namespace_create(actor=ACTOR, slug="clinic", name="Clinic")
    editor = User.objects.create_user("eddie", "eddie@example.com", PASSWORD)
    membership_set(actor=ACTOR, namespace=namespace, user=editor, role="editor")
    say(namespace, "en", "I take metformin.")
    say(namespace, "en", "My doctor took me off the metformin.")
    say(namespace, "zh", "我对花生过敏。")
    say(namespace, "zh", "医生说我对花生过敏可能是误诊。")
    found = {m.subject.external_id: m for m in Memory.objects.filter(status=Status.DISPUTED)}
    assert set(found) == {"en", "zh"}, found
    return found


def test_a_reviewer_confirms_one_in_english_and_ends_one_in_chinese(
    disputed: dict[str, Memory], live_server: Any, browser: Any
) -> None:
    base = live_server.url
    english = browser.new_context(locale="en-GB")
    page = english.new_page()
    said = watch_console(page)
    log_in(page, base, "eddie")
    page.goto(f"{base}/n/clinic/review/")
    section = page.locator("section.queue-section", has_text="Disputed")
    assert section.locator(".queue-item").count() == 2
    item = page.locator(f".queue-item[data-reason='disputed'][data-memory='{disputed['en'].pk}']")
    assert "My doctor took me off the metformin." in item.inner_text()
    assert "The user takes metformin." in item.inner_text()
    item.focus()
    page.keyboard.press("c")
    page.locator(".queue-item.done[data-done='confirm']").wait_for()
    confirmed = Memory.objects.get(pk=disputed["en"].pk)
    assert (confirmed.status, confirmed.valid_to) == (Status.ACTIVE, None)
    assert axe_problems(page) == []
    assert csp_refusals(said) == []
    english.close()

    chinese = browser.new_context(locale="zh-CN")
    page = chinese.new_page()
    log_in(page, base, "eddie")
    page.goto(f"{base}/n/clinic/review/")
    assert "有争议" in page.locator("section.queue-section h2").first.inner_text()
    item = page.locator(f".queue-item[data-reason='disputed'][data-memory='{disputed['zh'].pk}']")
    assert "医生说我对花生过敏可能是误诊。" in item.inner_text()
    assert "确认" in item.inner_text()
    assert "结束" in item.inner_text()
    item.focus()
    page.keyboard.press("x")
    page.locator(".queue-item.done[data-done='end']").wait_for()
    ended = Memory.objects.get(pk=disputed["zh"].pk)
    assert ended.valid_to is not None
    assert ended.metadata["ended"] == "ended by a reviewer"
    assert page.locator(".queue-item:not(.done)").count() == 0
    chinese.close()
