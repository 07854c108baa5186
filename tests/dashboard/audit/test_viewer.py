"""The audit viewer: filters in the address, cursor pages with a capped count, an event's
detail, the chain's status and "verify now" as a job the page polls."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from apps.audit import selectors
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, ChainVerification, Outcome, VerificationStatus
from apps.audit.services import audit_record, chain_verification_run, chain_verification_start
from tests.audit.test_chain_verification import bypassing_triggers
from tests.dashboard.audit.conftest import ACTOR, AuditCast

LOG = "/audit/"
HTMX = {"HX-Request": "true"}


def listed(client: Client, query: str = "", **headers: str) -> list[int]:
    """The event ids of the page's rows, in order."""
    html = client.get(LOG + query, headers=headers).content.decode()
    return [
        int(found) for found in re.findall(r'<td data-label="[^"]*"><a href="/audit/(\d+)/">', html)
    ]


def ids(**filters: Any) -> list[int]:
    return list(AuditEvent.objects.filter(**filters).order_by("-id").values_list("pk", flat=True))


@pytest.fixture
def varied(cast: AuditCast) -> dict[str, Any]:
    """Events of every filter's kind in acme: outcomes, actors, a subject, old times."""
    subject = uuid.uuid4()
    bob = Actor(type="user", id="42", name="bob")
    audit_record(actor=bob, action="memory.create", namespace=cast.acme, subject_id=subject)
    audit_record(actor=bob, action="memory.delete", namespace=cast.acme, outcome=Outcome.DENIED)
    audit_record(actor=ACTOR, action="memory.create", namespace=cast.globex)
    return {"subject": subject}


def test_it_lists_newest_first(cast: AuditCast) -> None:
    assert listed(cast.client("alice")) == ids()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("?action=memory.create", {"action": "memory.create"}),
        ("?outcome=denied", {"outcome": "denied"}),
        ("?actor=bob", {"actor_name": "bob"}),
        ("?namespace=globex", {"namespace_slug": "globex"}),
        ("?action=memory.create&namespace=acme",
         {"action": "memory.create", "namespace_slug": "acme"}),
    ],
)  # fmt: skip
def test_it_filters_by_the_query_string(
    cast: AuditCast, varied: dict[str, Any], query: str, expected: dict[str, str]
) -> None:
    found = listed(cast.client("alice"), query)
    assert found
    assert found == ids(**expected)


def test_it_filters_by_subject(cast: AuditCast, varied: dict[str, Any]) -> None:
    subject = varied["subject"]
    assert listed(cast.client("alice"), f"?subject={subject}") == ids(subject_id=subject)
    assert len(ids(subject_id=subject)) == 1


def test_it_filters_by_a_time_range(cast: AuditCast) -> None:
    events = list(AuditEvent.objects.order_by("id"))
    middle = events[len(events) // 2]
    since = (middle.created_at).strftime("%Y-%m-%dT%H:%M:%S.%f")
    found = listed(cast.client("alice"), f"?since={since}")
    assert found == ids(created_at__gte=middle.created_at)
    assert middle.pk in found
    assert events[0].pk not in found
    until = listed(cast.client("alice"), f"?until={since}")
    assert until == ids(created_at__lt=middle.created_at)
    later = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    assert listed(cast.client("alice"), f"?since={later}") == []


def test_it_keeps_the_filters_in_the_form_and_the_page_links(
    cast: AuditCast, varied: dict[str, Any]
) -> None:
    html = cast.client("alice").get(LOG + "?actor=bob&outcome=denied&size=25").content.decode()
    assert 'name="actor" value="bob"' in html
    assert '<option value="denied" selected>' in html
    assert 'href="/audit/export.jsonl?actor=bob&amp;outcome=denied"' in html
    assert 'hx-push-url="true"' in html


def test_it_answers_an_htmx_request_with_the_results_fragment(cast: AuditCast) -> None:
    html = cast.client("alice").get(LOG + "?actor=tests", headers=HTMX).content.decode()
    assert html.lstrip().startswith('<section id="results"')
    assert "<html" not in html
    assert listed(cast.client("alice"), "?actor=tests", **HTMX) == ids(actor_name="tests")


def test_it_says_when_the_filters_are_not_valid(cast: AuditCast) -> None:
    response = cast.client("alice").get(LOG + "?outcome=maybe&subject=not-a-uuid")
    assert response.status_code == 200
    html = response.content.decode()
    assert "The filters are not valid." in html
    assert "<tbody>" not in html.split('id="results"')[1]  # no rows (the chains have a table)


def test_it_says_what_to_do_when_nothing_matches(cast: AuditCast) -> None:
    html = cast.client("alice").get(LOG + "?action=none.such").content.decode()
    assert "No audit event matches these filters." in html


def _next(html: str, name: str = "after") -> str:
    found = re.search(rf'href="\?[^"]*{name}=([A-Za-z0-9_-]+)"', html)
    assert found, name
    return found.group(1)


def test_it_pages_by_cursor_with_numbered_rows(cast: AuditCast) -> None:
    for n in range(60):
        audit_record(actor=ACTOR, action="test.page", object_id=str(n))
    everything = ids(action="test.page")
    client = cast.client("alice")
    first = client.get(LOG + "?action=test.page&size=25").content.decode()
    assert "1–25 of 60" in first
    cursor = _next(first)
    second = client.get(LOG + f"?action=test.page&size=25&after={cursor}").content.decode()
    assert "26–50 of 60" in second
    assert listed(client, f"?action=test.page&size=25&after={cursor}") == everything[25:50]
    third_cursor = _next(second)
    third = client.get(LOG + f"?action=test.page&size=25&after={third_cursor}")
    assert "51–60 of 60" in third.content.decode()
    assert "after=" not in third.content.decode().split('class="pager"')[1]
    back = _next(second, "before")
    again = client.get(LOG + f"?action=test.page&size=25&before={back}").content.decode()
    assert "1–25 of 60" in again
    assert listed(client, f"?action=test.page&size=25&before={back}") == everything[:25]
    assert listed(client, "?action=test.page&after=garbage!") == everything[:50]


def test_it_caps_the_count_and_says_so(cast: AuditCast, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selectors, "COUNT_CAP", 5)
    total = AuditEvent.objects.count()
    assert total > 5
    html = cast.client("alice").get(LOG + "?size=25").content.decode()
    assert f"1–{min(total, 25)} of more than 5" in html


def test_it_shows_an_event_with_its_hashes_and_scoped_neighbours(cast: AuditCast) -> None:
    event = cast.acme_event
    response = cast.client("olive").get(f"/audit/{event.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    for value in (event.hash, event.prev_hash, "test.acme", "m-1", "acme"):
        assert value in html
    assert "The hash matches this event's fields." in html
    acme = ids(namespace_id=cast.acme.pk)
    position = acme.index(event.pk)
    newer = acme[position - 1] if position else None
    older = acme[position + 1]
    assert f'href="/audit/{older}/" rel="prev"' in html
    if newer:
        assert f'href="/audit/{newer}/" rel="next"' in html
    # olive's neighbours skip globex's event, which sits between acme's in the chain.
    assert f'href="/audit/{cast.globex_event.pk}/"' not in html


def test_it_says_when_an_events_hash_no_longer_matches(cast: AuditCast) -> None:
    with bypassing_triggers() as cursor:
        cursor.execute(
            "UPDATE audit_auditevent SET action = 'test.forged' WHERE id = %s",
            [cast.acme_event.pk],
        )
    html = cast.client("alice").get(f"/audit/{cast.acme_event.pk}/").content.decode()
    assert "the event was changed" in html


def test_it_answers_404_for_an_event_that_is_not_there(cast: AuditCast) -> None:
    assert cast.client("alice").get("/audit/99999999/").status_code == 404


def test_it_runs_verify_now_as_a_job_and_shows_its_result(
    cast: AuditCast, django_capture_on_commit_callbacks: Any
) -> None:
    client = cast.client("alice")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/audit/verify/", {"full": "on"})
    verification = ChainVerification.objects.get()
    assert response["Location"] == f"/audit/verifications/{verification.pk}/"
    assert verification.status == VerificationStatus.SUCCEEDED
    assert verification.requested_by == "user:alice"
    assert verification.full
    newest = AuditEvent.objects.order_by("-id").first()
    assert newest is not None
    assert (newest.action, newest.actor_name) == ("audit.chain_verify", "alice")
    html = client.get(response["Location"]).content.decode()
    assert "Intact" in html
    assert f"event #{newest.pk}" in html
    assert "hx-trigger" not in html  # finished: no more polling


def test_it_verifies_incrementally_when_the_box_is_not_ticked(
    cast: AuditCast, django_capture_on_commit_callbacks: Any
) -> None:
    first = chain_verification_run(requested_by="beat", full=True)
    with django_capture_on_commit_callbacks(execute=True):
        cast.client("alice").post("/audit/verify/")
    second = ChainVerification.objects.exclude(pk=first.pk).get()
    assert not second.full
    assert second.from_event_id == first.through_event_id


def test_it_polls_a_running_verification_with_htmx(cast: AuditCast) -> None:
    running = chain_verification_start(requested_by="user:alice")
    client = cast.client("alice")
    url = f"/audit/verifications/{running.pk}/"
    html = client.get(url).content.decode()
    assert f'hx-get="{url}"' in html
    assert 'hx-trigger="every 1s"' in html
    fragment = client.get(url, headers=HTMX).content.decode()
    assert fragment.lstrip().startswith('<section id="progress"')
    assert "Running" in fragment
    log = client.get(LOG).content.decode()
    assert f'href="{url}"' in log  # the log links to the running walk


def test_it_shows_a_broken_chain_in_red_with_its_first_broken_link(
    cast: AuditCast,
) -> None:
    with bypassing_triggers() as cursor:
        cursor.execute(
            "UPDATE audit_auditevent SET actor_name = 'mallory' WHERE id = %s",
            [cast.acme_event.pk],
        )
    verification = chain_verification_run(requested_by="beat", full=True)
    assert verification.status == VerificationStatus.BROKEN
    html = cast.client("alice").get(LOG).content.decode()
    assert 'class="chain-broken" role="alert"' in html
    assert f"First broken link: event #{cast.acme_event.pk}" in html
    page = cast.client("alice").get(f"/audit/verifications/{verification.pk}/").content.decode()
    assert f'href="/audit/{cast.acme_event.pk}/"' in page
    assert "verification-broken" in page


def test_it_says_the_list_was_checked_whole_with_the_lists_own_count(cast: AuditCast) -> None:
    chain_verification_run(requested_by="beat", full=True)
    html = cast.client("olive").get(LOG).content.decode()
    total = AuditEvent.objects.filter(namespace_id=cast.acme.pk).count()
    assert f"1–{total} of {total}" in html
    assert f"Checked all {total} events of acme's chain: intact." in html
    assert 'class="chain-ok"' in html


def test_it_says_which_events_were_written_after_the_check_began(cast: AuditCast) -> None:
    chain_verification_run(requested_by="beat", full=True)
    audit_record(actor=ACTOR, action="test.later", namespace=cast.acme)
    html = cast.client("alice").get(LOG + "?namespace=acme").content.decode()
    total = AuditEvent.objects.filter(namespace_id=cast.acme.pk).count()
    assert f"1–{total} of {total}" in html
    assert (
        f"Checked {total - 1} of {total} events of acme's chain: intact. "
        "The newest was written after the check began."
    ) in html


def test_it_names_the_chains_a_superusers_whole_list_spans(cast: AuditCast) -> None:
    chain_verification_run(requested_by="beat", full=True)
    html = cast.client("alice").get(LOG).content.decode()
    total = AuditEvent.objects.count()
    assert f"1–{total} of {total}" in html
    assert f"Checked all {total} events of 3 chains: intact." in html


def test_it_says_the_filters_narrow_the_events_checked(cast: AuditCast) -> None:
    chain_verification_run(requested_by="beat", full=True)
    html = cast.client("olive").get(LOG + "?action=test.acme").content.decode()
    assert "1–1 of 1" in html
    assert "Checked the 1 event of acme's chain that match the filters: intact." in html


def test_it_says_when_the_chain_was_never_verified(cast: AuditCast) -> None:
    html = cast.client("alice").get(LOG).content.decode()
    assert "The events of 3 chains have not been checked yet." in html


def test_it_counts_the_events_a_finished_walk_checked_not_the_ids(cast: AuditCast) -> None:
    with transaction.atomic():  # an append rolled back: a gap in the ids
        audit_record(actor=ACTOR, action="test.rolled_back", namespace=cast.acme)
        transaction.set_rollback(True)
    audit_record(actor=ACTOR, action="test.after_the_gap", namespace=cast.acme)
    verification = chain_verification_run(requested_by="beat", full=True)
    assert verification.checked == verification.to_check == AuditEvent.objects.count()
    page = cast.client("alice").get(f"/audit/verifications/{verification.pk}/").content.decode()
    assert f"{verification.checked} of {verification.checked} links checked" in page


def _date(event: AuditEvent, moment: Any) -> None:
    with bypassing_triggers() as cursor:
        cursor.execute(
            "UPDATE audit_auditevent SET created_at = %s WHERE id = %s", [moment, event.pk]
        )


def test_it_narrows_a_time_range_to_ids_but_keeps_events_dated_slightly_out_of_order(
    cast: AuditCast,
) -> None:
    now = timezone.now()
    old, before, inside, skewed, after = (
        audit_record(actor=ACTOR, action="test.time", object_id=str(n)) for n in range(5)
    )
    _date(old, now - timedelta(days=3))
    _date(before, now - timedelta(days=2, hours=1))
    _date(inside, now - timedelta(days=2) + timedelta(minutes=30))
    # Written after `inside` but dated a little earlier (another server's clock): still in.
    _date(skewed, now - timedelta(days=2) + timedelta(minutes=25))
    _date(after, now - timedelta(days=1))
    since, until = now - timedelta(days=2), now - timedelta(days=2) + timedelta(hours=1)
    above, below = selectors.audit_ids_for_time_range(since=since, until=until)
    assert above == before.pk  # the newest event dated over the slack before the range
    assert below == after.pk
    query = f"?action=test.time&since={since:%Y-%m-%dT%H:%M:%S}&until={until:%Y-%m-%dT%H:%M:%S}"
    assert listed(cast.client("alice"), query) == [skewed.pk, inside.pk]


def test_it_lists_each_chain_the_viewer_may_see_with_its_head(cast: AuditCast) -> None:
    from apps.audit.services import chain_verification_run

    chain_verification_run(requested_by="tests")
    admin = cast.client("alice").get(LOG).content.decode()
    chains = admin.split('id="chains"')[1].split("</details>")[0]
    assert "3 chains" in chains
    for name in ("Acme", "Globex", "Global (no namespace)"):
        assert re.search(f'<th scope="row"[^>]*>{re.escape(name)}</th>', chains)
    newest_acme = AuditEvent.objects.filter(chain=cast.acme.pk).order_by("-id").first()
    assert newest_acme is not None
    assert newest_acme.hash in chains
    assert "Verified through its newest event" in chains
    owner = cast.client("olive").get(LOG).content.decode()
    mine = owner.split('id="chains"')[1].split("</details>")[0]
    assert "1 chain" in mine
    assert "Acme" in mine
    assert "Globex" not in mine
    assert "Global" not in mine
