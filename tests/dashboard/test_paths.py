"""Every address of the dashboard, listed from the URL resolver before its pages moved into
apps/dashboard: moving a page never moves its address (bookmarks, links in e-mails and the
audit log's request paths keep working)."""

from __future__ import annotations

import pytest
from django.urls import resolve

# (an address, the route it must resolve to)
DASHBOARD_PATHS = [
    ("/accounts/login/", "accounts/login/"),
    ("/accounts/logout/", "accounts/logout/"),
    ("/api-keys/", "api-keys/"),
    ("/api-keys/new/", "api-keys/new/"),
    ("/api-keys/abc/", "api-keys/<str:prefix>/"),
    ("/api-keys/abc/revoke/", "api-keys/<str:prefix>/revoke/"),
    ("/api-keys/abc/expiry/", "api-keys/<str:prefix>/expiry/"),
    ("/", ""),
    ("/n/acme/", "n/<slug:slug>/"),
    ("/memories/", "memories/"),
    ("/namespaces/", "namespaces/"),
    ("/n/acme/settings/", "n/<slug:slug>/settings/"),
    ("/n/acme/members/", "n/<slug:slug>/members/"),
    ("/n/acme/members/change/", "n/<slug:slug>/members/change/"),
    ("/accounts/set-password/MQ/set-password/", "accounts/set-password/<uidb64>/<token>/"),
    ("/n/acme/memories/", "n/<slug:slug>/memories/"),
    ("/n/acme/memories/bulk/", "n/<slug:slug>/memories/bulk/"),
    ("/n/acme/memories/purge/", "n/<slug:slug>/memories/purge/"),
    ("/n/acme/jobs/abc/", "n/<slug:slug>/jobs/<str:job_id>/"),
    ("/n/acme/memories/abc/", "n/<slug:slug>/memories/<str:memory_id>/"),
    ("/n/acme/memories/abc/edit/", "n/<slug:slug>/memories/<str:memory_id>/edit/"),
    ("/n/acme/memories/abc/feedback/", "n/<slug:slug>/memories/<str:memory_id>/feedback/"),
    ("/n/acme/memories/abc/action/", "n/<slug:slug>/memories/<str:memory_id>/action/"),
    ("/n/acme/memories/abc/delete/", "n/<slug:slug>/memories/<str:memory_id>/delete/"),
    ("/n/acme/review/", "n/<slug:slug>/review/"),
    ("/n/acme/review/merge/", "n/<slug:slug>/review/merge/"),
    ("/n/acme/subjects/", "n/<slug:slug>/subjects/"),
    ("/n/acme/subjects/abc/", "n/<slug:slug>/subjects/<str:subject_id>/"),
    ("/n/acme/subjects/abc/export/", "n/<slug:slug>/subjects/<str:subject_id>/export/"),
    ("/n/acme/subjects/abc/portal-link/", "n/<slug:slug>/subjects/<str:subject_id>/portal-link/"),
    ("/n/acme/subjects/abc/pause/", "n/<slug:slug>/subjects/<str:subject_id>/pause/"),
    ("/n/acme/subjects/abc/erase/", "n/<slug:slug>/subjects/<str:subject_id>/erase/"),
    ("/playground/", "playground/"),
    ("/playground/feedback/", "playground/feedback/"),
    ("/quality/", "quality/"),
    ("/n/acme/quality/", "n/<slug:slug>/quality/"),
    ("/n/acme/quality/import/", "n/<slug:slug>/quality/import/"),
    ("/n/acme/quality/from-feedback/", "n/<slug:slug>/quality/from-feedback/"),
    ("/n/acme/quality/sets/new/", "n/<slug:slug>/quality/sets/new/"),
    (
        "/n/acme/quality/sets/00000000-0000-4000-8000-000000000001/",
        "n/<slug:slug>/quality/sets/<uuid:set_id>/",
    ),
    (
        "/n/acme/quality/sets/00000000-0000-4000-8000-000000000001/delete/",
        "n/<slug:slug>/quality/sets/<uuid:set_id>/delete/",
    ),
    (
        "/n/acme/quality/cases/00000000-0000-4000-8000-000000000001/delete/",
        "n/<slug:slug>/quality/cases/<uuid:case_id>/delete/",
    ),
    (
        "/n/acme/quality/recalls/00000000-0000-4000-8000-000000000001/case/",
        "n/<slug:slug>/quality/recalls/<uuid:recall_id>/case/",
    ),
    (
        "/n/acme/quality/runs/00000000-0000-4000-8000-000000000001/",
        "n/<slug:slug>/quality/runs/<uuid:run_id>/",
    ),
    (
        "/n/acme/quality/runs/00000000-0000-4000-8000-000000000001/cases/00000000-0000-4000-8000-000000000001/",
        "n/<slug:slug>/quality/runs/<uuid:run_id>/cases/<uuid:case_id>/",
    ),
    ("/n/acme/quality/compare/", "n/<slug:slug>/quality/compare/"),
    ("/n/acme/quality/variants/", "n/<slug:slug>/quality/variants/"),
    (
        "/n/acme/quality/variants/00000000-0000-4000-8000-000000000001/promote/",
        "n/<slug:slug>/quality/variants/<uuid:variant_id>/promote/",
    ),
    (
        "/n/acme/quality/variants/00000000-0000-4000-8000-000000000001/delete/",
        "n/<slug:slug>/quality/variants/<uuid:variant_id>/delete/",
    ),
    ("/audit/", "audit/"),
    ("/audit/export.jsonl", "audit/export.jsonl"),
    ("/audit/verify/", "audit/verify/"),
    ("/audit/verifications/7/", "audit/verifications/<int:verification_id>/"),
    ("/audit/7/", "audit/<int:event_id>/"),
]


@pytest.mark.parametrize(("address", "route"), DASHBOARD_PATHS)
def test_it_resolves_every_dashboard_address_to_a_dashboard_page(address: str, route: str) -> None:
    match = resolve(address)
    assert match.route == route
    assert match.namespaces[0] == "dashboard"
    view = getattr(match.func, "view_class", match.func)
    assert view.__module__.startswith("apps.dashboard.")
