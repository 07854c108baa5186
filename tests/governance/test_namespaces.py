"""Namespaces: the list and creating one; policies previewed as a dry run before they are
saved; members added, invited with a one-time link, re-roled and removed, the last owner
kept."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.memories.models import Memory
from apps.namespaces.models import Membership, Namespace
from tests.audit_events import one_event
from tests.governance.conftest import Cast

SETTINGS = {
    "name": "Acme",
    "description": "",
    "pii_policy": "allow",
    "recency_half_life_days": "180.0",
    "erasure_grace_days": "0",
}


def test_it_lists_only_the_users_namespaces(cast: Cast) -> None:
    html = cast.client("oscar").get("/namespaces/").content.decode()
    assert "/n/globex/" in html
    assert "/n/acme/" not in html


def test_it_lets_only_superusers_create_a_namespace(cast: Cast) -> None:
    assert cast.client("olive").post("/namespaces/", {"slug": "new"}).status_code == 403
    admin = User.objects.create_superuser("root", "root@example.com", None)
    client = Client()
    client.force_login(admin)
    with one_event("namespace.create"):
        response = client.post("/namespaces/", {"slug": "fresh", "name": "Fresh"})
    assert response["Location"] == "/n/fresh/settings/"
    created = Namespace.objects.get(slug="fresh")
    assert Membership.objects.get(namespace=created, user=admin).role == "owner"


def test_it_previews_a_retention_change_then_saves_it_when_confirmed(cast: Cast) -> None:
    Memory.objects.filter(pk=cast.shared.pk).update(created_at=timezone.now() - timedelta(days=40))
    client = cast.client("olive")
    before = AuditEvent.objects.count()
    preview = client.post("/n/acme/settings/", {**SETTINGS, "retention_days": "30"})
    html = preview.content.decode()
    assert "This retention change would archive 1 memories of 0 subjects." in html
    assert Namespace.objects.get(pk=cast.acme.pk).retention_days is None  # not saved yet
    assert AuditEvent.objects.count() == before
    with one_event("namespace.update") as events:
        client.post("/n/acme/settings/", {**SETTINGS, "retention_days": "30", "confirm": "1"})
    assert Namespace.objects.get(pk=cast.acme.pk).retention_days == 30
    assert events[0].details == {"fields": ["retention_days"]}
    assert Memory.objects.get(pk=cast.shared.pk).status == "active"  # the sweep archives later


def test_it_previews_what_a_pii_policy_would_have_done(cast: Cast) -> None:
    html = cast.client("olive").post("/n/acme/settings/", {**SETTINGS, "pii_policy": "redact"})
    total = Memory.objects.filter(namespace=cast.acme).count()
    assert f"would have redacted 1 of the last {total} writes" in html.content.decode()


def test_it_previews_a_cap_and_a_review_threshold(cast: Cast) -> None:
    html = (
        cast.client("olive")
        .post(
            "/n/acme/settings/",
            {**SETTINGS, "max_memories_per_subject": "2", "review_below": "0.95"},
        )
        .content.decode()
    )
    current = Memory.objects.filter(
        namespace=cast.acme, subject__isnull=False, status="active", valid_to__isnull=True
    ).count()
    assert f"This cap would archive {current - 2} memories of 1 subject now." in html
    below = Memory.objects.filter(
        namespace=cast.acme, status="active", valid_to__isnull=True, confidence__lt=0.95
    ).count()
    assert f"{below} current memories are less certain than 0.95" in html


def test_it_says_when_nothing_changed(cast: Cast) -> None:
    response = cast.client("olive").post("/n/acme/settings/", SETTINGS, follow=True)
    assert "Nothing changed." in response.content.decode()


def test_it_adds_changes_and_removes_a_member(cast: Cast) -> None:
    nora = User.objects.create_user("nora", "nora@example.com", None)
    client = cast.client("olive")
    with one_event("membership.set"):
        client.post("/n/acme/members/change/",
                    {"action": "add", "add-username": "nora", "add-role": "viewer"})  # fmt: skip
    assert Membership.objects.get(namespace=cast.acme, user=nora).role == "viewer"
    with one_event("membership.set"):
        client.post("/n/acme/members/change/",
                    {"action": "role", "user": str(nora.pk), "role": "editor"})  # fmt: skip
    assert Membership.objects.get(namespace=cast.acme, user=nora).role == "editor"
    before = AuditEvent.objects.count()
    asked = client.post("/n/acme/members/change/", {"action": "remove", "user": str(nora.pk)})
    page = asked.content.decode()
    assert "Remove nora?" in page  # asked first, saying who loses what
    assert "editing, reviewing, archiving and purging its memories" in page
    assert "its settings, members and API keys" not in page  # an editor, not an owner
    assert Membership.objects.filter(namespace=cast.acme, user=nora).exists()
    assert AuditEvent.objects.count() == before
    with one_event("membership.remove"):
        client.post("/n/acme/members/change/",
                    {"action": "remove", "user": str(nora.pk), "confirm": "1"})  # fmt: skip
    assert not Membership.objects.filter(namespace=cast.acme, user=nora).exists()


def test_adding_and_inviting_default_to_the_least_role(cast: Cast) -> None:
    page = cast.client("olive").get("/n/acme/members/").content.decode()
    for prefix in ("add", "invite"):
        select = re.search(rf'<select name="{prefix}-role"[^>]*>(.*?)</select>', page, re.S)
        assert select is not None
        assert re.search(r'<option value="viewer" selected>', select.group(1)), prefix


def test_a_user_name_that_is_no_user_name_is_refused(cast: Cast) -> None:
    before = User.objects.count()
    page = cast.client("olive").post(
        "/n/acme/members/change/",
        {"action": "invite", "invite-username": "<script>alert(1)</script>",
         "invite-role": "viewer"},
        follow=True,
    ).content.decode()  # fmt: skip
    assert "letters, digits and @ . + - _ only" in page
    assert User.objects.count() == before


def test_an_invitation_not_yet_accepted_is_no_owner_the_namespace_keeps(cast: Cast) -> None:
    client = cast.client("olive")
    olive = cast.users["olive"]
    client.post("/n/acme/members/change/",
                {"action": "invite", "invite-username": "ivy", "invite-role": "owner"})  # fmt: skip
    ivy = User.objects.get(username="ivy")
    assert "invited, not yet signed in" in client.get("/n/acme/members/").content.decode()
    refused = client.post("/n/acme/members/change/",
                          {"action": "role", "user": str(olive.pk), "role": "viewer"},
                          follow=True)  # fmt: skip
    assert "keeps at least one owner" in refused.content.decode()
    assert Membership.objects.get(namespace=cast.acme, user=olive).role == "owner"
    with one_event("membership.remove"):  # the invited owner can go
        client.post("/n/acme/members/change/",
                    {"action": "remove", "user": str(ivy.pk), "confirm": "1"})  # fmt: skip
    assert not Membership.objects.filter(namespace=cast.acme, user=ivy).exists()


def test_it_keeps_the_last_owner(cast: Cast) -> None:
    client = cast.client("olive")
    olive = cast.users["olive"]
    before = AuditEvent.objects.count()
    removed = client.post(
        "/n/acme/members/change/",
        {"action": "remove", "user": str(olive.pk), "confirm": "1"},
        follow=True,
    )
    assert "keeps at least one owner" in removed.content.decode()
    client.post("/n/acme/members/change/",
                {"action": "role", "user": str(olive.pk), "role": "viewer"})  # fmt: skip
    assert Membership.objects.get(namespace=cast.acme, user=olive).role == "owner"
    assert AuditEvent.objects.count() == before


def test_it_invites_a_user_with_a_one_time_link(cast: Cast) -> None:
    with one_event("user.invite") as events:
        page = cast.client("olive").post(
            "/n/acme/members/change/",
            {"action": "invite", "invite-username": "ivy", "invite-email": "ivy@example.com",
             "invite-role": "viewer"},
        ).content.decode()  # fmt: skip
    link = re.search(r'value="http://testserver(/accounts/set-password/[^"]+)"', page)
    assert link is not None
    assert link.group(1) not in str(events[0].details)
    ivy = User.objects.get(username="ivy")
    assert not ivy.has_usable_password()
    assert Membership.objects.get(namespace=cast.acme, user=ivy).role == "viewer"

    visitor = Client()
    form_page = visitor.get(link.group(1), follow=True)
    assert "Set your password" in form_page.content.decode()
    password = "a-long-enough-passphrase-1"
    visitor.post(form_page.redirect_chain[-1][0],
                 {"new_password1": password, "new_password2": password})  # fmt: skip
    ivy.refresh_from_db()
    assert ivy.check_password(password)
    again = Client().get(link.group(1), follow=True).content.decode()
    assert "This link no longer works" in again


def test_portal_origins_are_normalised_and_a_non_origin_is_refused(cast: Cast) -> None:
    client = cast.client("olive")
    body = {
        **SETTINGS,
        "portal_return_origins": "https://App.Example.com/, http://localhost:3000",
        "portal_frame_origins": "https://app.example.com/account",
        "confirm": "1",
    }
    refused = client.post("/n/acme/settings/", body)
    assert "is not an origin like https://app.example.com" in refused.content.decode()
    assert Namespace.objects.get(slug="acme").portal_return_origins == []
    body["portal_frame_origins"] = ""
    body["erasure_grace_days"] = "7"
    saved = client.post("/n/acme/settings/", body)
    assert saved.status_code == 302
    acme = Namespace.objects.get(slug="acme")
    assert acme.portal_return_origins == ["https://app.example.com", "http://localhost:3000"]
    assert acme.erasure_grace_days == 7


@pytest.mark.parametrize(
    ("path", "marked"),
    [
        ("/", "Overview"),
        ("/namespaces/", "Namespaces"),
        ("/n/acme/memories/", "Memories"),
        ("/n/acme/settings/", "Memories"),  # a namespace's own pages
        ("/n/acme/members/", "Memories"),
        ("/n/acme/quality/", "Quality"),
    ],
)
def test_the_top_navigation_marks_the_page_s_own_item_and_skips_to_content(
    cast: Cast, path: str, marked: str
) -> None:
    html = cast.client("olive").get(path).content.decode()
    nav = html[html.index('<nav aria-label="Main">') : html.index("</nav>")]
    assert re.findall(r'aria-current="page">([^<]+)</a>', nav) == [marked]
    body = html[html.index("<body") :]
    assert re.search(r'<a class="skip[^"]*" href="#main">', body[:400])
    assert '<main id="main">' in html
