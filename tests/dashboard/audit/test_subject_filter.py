"""The audit log's subject filter: an external id typed in full (no JavaScript needed), its
suggestions from one namespace as one types, and no external ids for viewers."""

from __future__ import annotations

import re

from apps.audit.models import AuditEvent
from apps.memories.models import Subject
from apps.memories.services.memories import NewMemory, memory_create
from tests.dashboard.audit.conftest import ACTOR, AuditCast

LOG = "/audit/"
SUGGEST = "/audit/subjects/"


def _remember(cast: AuditCast, who: str, namespace: str = "acme") -> Subject:
    memory_create(
        actor=ACTOR,
        namespace=getattr(cast, namespace),
        item=NewMemory(content=f"{who} likes tea", subject_external_id=who),
    )
    return Subject.objects.get(external_id=who, namespace__slug=namespace)


def _listed(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<td data-label="[^"]*"><a href="/audit/(\d+)/">', html)]


def test_it_filters_by_an_external_id_typed_in_full(cast: AuditCast) -> None:
    subject = _remember(cast, "demo-user-1")
    _remember(cast, "demo-user-2")
    html = cast.client("olive").get(LOG + "?subject=demo-user-1").content.decode()
    expected = AuditEvent.objects.filter(subject_id=subject.pk).order_by("-id")
    assert _listed(html) == list(expected.values_list("pk", flat=True))
    assert len(expected) >= 2  # the subject's creation and its memory's
    assert 'value="demo-user-1"' in html  # the filter keeps what was typed


def test_it_keeps_taking_a_subjects_id(cast: AuditCast) -> None:
    subject = _remember(cast, "demo-user-1")
    html = cast.client("vera").get(LOG + f"?subject={subject.pk}").content.decode()
    expected = AuditEvent.objects.filter(subject_id=subject.pk).order_by("-id")
    assert _listed(html) == list(expected.values_list("pk", flat=True))


def test_it_finds_nothing_by_external_id_for_a_viewer(cast: AuditCast) -> None:
    _remember(cast, "demo-user-1")
    html = cast.client("vera").get(LOG + "?subject=demo-user-1").content.decode()
    assert _listed(html) == []
    assert "No audit event matches these filters." in html
    assert 'list="subject-suggestions"' not in html


def test_it_suggests_the_external_ids_of_the_namespace_chosen(cast: AuditCast) -> None:
    for who in ("demo-user-1", "demo-user-2", "other"):
        _remember(cast, who)
    _remember(cast, "demo-globex", namespace="globex")
    alice = cast.client("alice")
    html = alice.get(SUGGEST + "?namespace=acme&subject=demo").content.decode()
    assert re.findall(r'<option value="([^"]*)">', html) == ["demo-user-1", "demo-user-2"]
    everywhere = alice.get(SUGGEST + "?subject=demo").content.decode()
    assert "demo-globex" in everywhere
    assert cast.client("olive").get(SUGGEST + "?namespace=globex&subject=d").status_code == 404
    assert "demo-globex" not in cast.client("olive").get(SUGGEST + "?subject=d").content.decode()


def test_it_wires_the_suggestions_to_the_filter(cast: AuditCast) -> None:
    html = cast.client("olive").get(LOG).content.decode()
    assert 'list="subject-suggestions"' in html
    assert 'hx-get="/audit/subjects/"' in html
    assert '<datalist id="subject-suggestions">' in html


def test_it_renders_a_hostile_external_id_inert(cast: AuditCast) -> None:
    _remember(cast, '"><script>alert(1)</script>')
    html = cast.client("olive").get(SUGGEST + "?subject=%22").content.decode()
    assert "<script>" not in html
    assert "&quot;&gt;&lt;script&gt;" in html
    log = cast.client("olive").get(LOG).content.decode()
    assert "<script>alert(1)" not in log
