"""A person's facts as timelines (apps/pipeline/timeline.py) on the demo: the corrected
allergy reads "peanuts (…, corrected in conversation) → shellfish (since …)" on the
subject's page and in the person's portal, in English and in Chinese, with links to the
turns that stated each value."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from apps.demo.services import demo_actor
from apps.memories.models import Subject
from apps.namespaces.models import Namespace
from apps.pipeline.timeline import fact_timelines
from apps.privacy.services import portal_link_create

ZH = "zh-CN,zh;q=0.9"


def _allergy(html: str) -> str:
    """The text of the allergy timeline on a page (its <div class="timeline">)."""
    found = [
        block
        for block in re.findall(r'<div class="timeline">(.*?)</div>', html, re.S)
        if "peanut" in block
    ]
    assert len(found) == 1, found
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found[0]))


def test_the_corrected_allergy_is_one_timeline_in_order(demo: Namespace) -> None:
    subject = Subject.objects.get(namespace=demo, external_id="demo-user-1")
    timelines = fact_timelines(subject=subject)
    (allergy,) = [t for t in timelines if "peanut" in t.steps[0].text]
    # A fact that never changed ("The user works as a pastry chef.") is no timeline.
    from apps.memories.models import Kind, Memory
    from apps.memories.row_encryption import KeyCache, open_memory

    keys = KeyCache()
    facts = Memory.objects.filter(subject=subject, kind=Kind.SEMANTIC, valid_to__isnull=True)
    assert any("pastry chef" in open_memory(keys, fact) for fact in facts)
    assert not [t for t in timelines if any("pastry chef" in s.text for s in t.steps)]
    first, then = allergy.steps
    assert str(allergy.kind) == "allergy"
    assert "peanuts" in first.text
    assert first.until is not None
    assert first.how == "corrected_in_conversation"
    assert [turn.source["message"] for turn in first.turns] == [first.memory.source["message"]]
    assert then.text == "The user is allergic to shellfish."
    assert then.until is None
    assert then.since >= first.since
    assert allergy.current is then


def test_the_subject_page_draws_it_in_english_and_chinese(
    demo: Namespace, alice_client: Client
) -> None:
    subject = Subject.objects.get(namespace=demo, external_id="demo-user-1")
    url = reverse("dashboard:subjects:detail", kwargs={"slug": demo.slug, "subject_id": subject.pk})
    english = _allergy(alice_client.get(url).content.decode())
    assert "allergy" in english
    assert "corrected by the person in conversation" in english
    assert re.search(r"peanuts.*→?.*shellfish", english)
    assert re.search(r"since \d{4}-\d{2}-\d{2}", english)
    assert "the turn" in english
    chinese = _allergy(alice_client.get(url, HTTP_ACCEPT_LANGUAGE=ZH).content.decode())
    assert "过敏" in chinese
    assert "由本人在对话中更正" in chinese
    assert re.search(r"自 \d{4}-\d{2}-\d{2} 起", chinese)


def test_the_portal_shows_the_person_their_own_history(demo: Namespace) -> None:
    subject = Subject.objects.get(namespace=demo, external_id="demo-user-1")
    for locale, said in (
        ("en", "you corrected it in conversation"),
        ("zh-hans", "你在对话中更正了它"),
    ):
        portal = Client()
        link = portal_link_create(
            actor=demo_actor(name="tests"), namespace=demo, subject=subject,
            base_url="http://testserver", locale=locale,
        )  # fmt: skip
        assert portal.get(link.url.removeprefix("http://testserver")).status_code == 303
        url = reverse("privacy:memories", kwargs={"subject_id": subject.pk}) + "?kind=history"
        page = portal.get(url, HTTP_ACCEPT_LANGUAGE=ZH if locale != "en" else "en")
        assert page.status_code == 200
        timeline = _allergy(page.content.decode())
        assert said in timeline
        assert "shellfish" in timeline


def test_each_memory_page_reads_the_supersede_in_its_own_direction_once(
    demo: Namespace, alice_client: Client
) -> None:
    from apps.memories.models import Kind, Memory
    from apps.memories.row_encryption import KeyCache, open_memory

    keys = KeyCache()
    facts = Memory.objects.filter(subject__external_id="demo-user-1", kind=Kind.SEMANTIC)
    by_text = {open_memory(keys, fact): fact for fact in facts}
    old, new = by_text["The user lives in Hangzhou."], by_text["The user lives in Shanghai."]

    def decisions(memory: Memory) -> str:
        url = reverse(
            "dashboard:memories:detail", kwargs={"slug": demo.slug, "memory_id": memory.pk}
        )
        html = alice_client.get(url).content.decode()
        section = html[html.index("Consolidation decisions") :]
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section[: section.index("</table>")]))

    on_old = decisions(old)
    assert "Superseded by a newer memory" in on_old
    assert "Superseded an older memory" not in on_old
    assert on_old.count("The user lives in Shanghai.") == 1
    on_new = decisions(new)
    assert "Superseded an older memory" in on_new
    assert on_new.count("The user lives in Hangzhou.") == 1
