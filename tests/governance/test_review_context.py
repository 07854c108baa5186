"""What the review queue shows a person to decide from: each item's source turn between the
turns before and after it, the other memory of a near-duplicate pair, and for a disputed
fact the turn that disputed it and the fact's history; read in as many queries for a page
of items as for one."""

from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.governance.selectors import review_queue
from apps.memories.models import Memory, Status
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import NewMemory, memory_create
from apps.namespaces.models import Namespace
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.jobs import ingest_job_run
from apps.pipeline.models import JobStatus
from tests.governance.conftest import Cast

ACTOR = Actor.system("tests")


def converse(namespace: Namespace, subject: str, *turns: tuple[str, str]) -> None:
    """Turns of the subject's session `<subject>-s`, through the write pipeline."""
    job, _ = messages_ingest(
        actor=ACTOR,
        namespace=namespace,
        subject_external_id=subject,
        session_external_id=f"{subject}-s",
        messages=[IncomingMessage(role, text) for role, text in turns],
    )
    job.refresh_from_db()
    if job.status != JobStatus.SUCCEEDED:
        ingest_job_run(job_id=str(job.id))


def dispute(namespace: Namespace, subject: str) -> Memory:
    """A subject whose allergy was corrected (peanuts, then shellfish), then put in doubt."""
    converse(
        namespace,
        subject,
        ("user", "Hi, can you help me plan dinners?"),
        ("assistant", "Of course! Anything I should know?"),
        ("user", "I'm allergic to peanuts."),
        ("assistant", "Noted: no peanuts."),
        ("user", "Thanks, that's all for today."),
    )
    converse(namespace, subject, ("user", "Actually, I'm not allergic to peanuts, it's shellfish."))
    converse(
        namespace,
        subject,
        ("user", "My allergist thinks the shellfish allergy was a misdiagnosis."),
    )
    return Memory.objects.get(subject__external_id=subject, status=Status.DISPUTED)


def article(html: str, memory: Memory, reason: str) -> str:
    found = re.search(
        rf'<article [^>]*data-reason="{reason}" data-memory="{memory.pk}".*?</article>', html, re.S
    )
    assert found, f"no {reason} item for {memory.pk}"
    return found.group(0)


def test_it_shows_the_source_turn_between_the_turns_before_and_after_it(cast: Cast) -> None:
    disputed = dispute(cast.acme, "u7")
    (item,) = [i for i in review_queue(namespace=cast.acme)["disputed"] if i.row.memory == disputed]
    said = [(turn.role, turn.content, turn.is_source) for turn in item.turns]
    assert said == [
        ("user", "Thanks, that's all for today.", False),
        ("user", "Actually, I'm not allergic to peanuts, it's shellfish.", True),
        ("user", "My allergist thinks the shellfish allergy was a misdiagnosis.", False),
    ]
    html = article(
        cast.client("eddie").get("/n/acme/review/").content.decode(), disputed, "disputed"
    )
    turns = re.findall(
        r"<li value=\"(\d+)\"( class=\"source\" aria-current=\"true\")?>(.*?)</li>", html
    )
    assert [(number, bool(source)) for number, source, _ in turns] == [
        ("5", False),
        ("6", True),
        ("7", False),
    ]
    assert '<span class="role">user</span> Actually, I&#x27;m not allergic to peanuts' in html
    assert '<span class="badge source-mark">source</span>' in turns[1][2]


def test_it_shows_the_turn_that_disputed_a_fact_and_the_fact_s_history(cast: Cast) -> None:
    disputed = dispute(cast.acme, "u7")
    (item,) = [i for i in review_queue(namespace=cast.acme)["disputed"] if i.row.memory == disputed]
    assert item.other is not None
    assert item.other.content == "My allergist thinks the shellfish allergy was a misdiagnosis."
    assert item.history is not None
    assert [(step.text, step.how) for step in item.history.steps] == [
        ("The user is allergic to peanuts.", "corrected_in_conversation"),
        ("The user is allergic to shellfish.", "disputed"),
    ]
    html = article(
        cast.client("eddie").get("/n/acme/review/").content.decode(), disputed, "disputed"
    )
    history = html[html.index('class="history"') :]
    assert re.search(r"<h3>allergy</h3>", history)
    assert "The user is allergic to peanuts." in history
    assert "corrected by the person in conversation" in history
    assert "in doubt, waiting for a reviewer" in history
    assert "Put in doubt by" in html
    assert "My allergist thinks the shellfish allergy was a misdiagnosis." in html


def test_it_audits_the_earlier_values_of_a_history_as_read(cast: Cast) -> None:
    disputed = dispute(cast.acme, "u7")
    keys = KeyCache()
    (peanuts,) = [
        m
        for m in Memory.objects.filter(subject=disputed.subject, kind="semantic")
        if open_memory(keys, m) == "The user is allergic to peanuts."
    ]
    cast.client("eddie").get("/n/acme/review/")
    event = AuditEvent.objects.filter(action="dashboard.read.review").latest("id")
    assert str(peanuts.pk) in event.details["memory_ids"]
    assert str(disputed.pk) in event.details["memory_ids"]


def test_it_shows_the_other_memory_of_a_near_duplicate_pair(cast: Cast) -> None:
    twin = memory_create(
        actor=ACTOR,
        namespace=cast.acme,
        item=NewMemory(subject_external_id="u1", content="The user likes jasmine green tea."),
    )
    (pair,) = review_queue(namespace=cast.acme)["duplicate"]
    other = pair.other.memory if pair.row.memory == twin else pair.row.memory
    shown = pair.row.memory
    html = article(cast.client("vera").get("/n/acme/review/").content.decode(), shown, "duplicate")
    twin_html = html[html.index('class="twin"') :]
    assert f'href="/n/acme/memories/{other.pk}/"' in twin_html
    assert open_memory(KeyCache(), other) in twin_html
    assert ">Semantic (facts, preferences)</span>" in twin_html
    created = other.created_at.strftime("%Y-%m-%d %H:%M")
    assert f"created {created} UTC" in twin_html


def test_it_reads_a_page_of_items_in_as_many_queries_as_one(cast: Cast) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as run:
            review_queue(namespace=cast.acme)
        return len(run.captured_queries)

    def troubles(subject: str) -> None:
        """A disputed fact and a near-duplicate pair of the subject."""
        dispute(cast.acme, subject)
        for text in ("Prefers evening classes.", "Prefers evening classes!"):
            memory_create(
                actor=ACTOR,
                namespace=cast.acme,
                item=NewMemory(subject_external_id=subject, content=text),
            )

    troubles("u7")
    one = queries()
    for n in range(4):
        troubles(f"u{10 + n}")
    queue = review_queue(namespace=cast.acme)
    assert len(queue["disputed"]) == 5
    assert len(queue["duplicate"]) == 5
    assert all(item.turns and item.history for item in queue["disputed"])
    assert queries() == one
