"""GET /api/v1/namespaces/{ns}/memories filtered by `kind`, `status`, `since` and `until`:
each filter keeps exactly the memories on its side, so every test fails if its filter were
ignored. `since` is inclusive and `until` exclusive (a half-open window on `created_at`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.memories.models import Memory
from tests.conftest import Tenant

# content: (kind, status, created_at)
LAYOUT = {
    "Prefers tea": ("semantic", "active", datetime(2024, 1, 10, tzinfo=UTC)),
    "Went to Rome": ("episodic", "active", datetime(2024, 2, 10, tzinfo=UTC)),
    "Answer in French": ("procedural", "active", datetime(2024, 3, 10, tzinfo=UTC)),
    "Used to live in Oslo": ("semantic", "archived", datetime(2024, 2, 20, tzinfo=UTC)),
    "Maybe likes jazz": ("episodic", "pending_review", datetime(2024, 3, 20, tzinfo=UTC)),
}


@pytest.fixture
def memories(acme: Tenant) -> dict[str, str]:
    """The memories of LAYOUT, written and changed through the API; content -> id."""
    ids = {}
    for content, (kind, status, created_at) in LAYOUT.items():
        response = acme.client.post(
            acme.url("memories"), {"subject": "u1", "content": content, "kind": kind}, format="json"
        )
        assert response.status_code == 201, response.json()
        memory_id = response.json()["id"]
        if status != "active":
            changed = acme.client.patch(
                acme.url(f"memories/{memory_id}"), {"status": status}, format="json"
            )
            assert changed.status_code == 200, changed.json()
        # Written today: placed on the calendar of LAYOUT (no API sets a creation time).
        Memory.objects.filter(pk=memory_id).update(created_at=created_at)
        ids[content] = memory_id
    return ids


def listed(tenant: Tenant, **query: str) -> set[str]:
    response = tenant.client.get(tenant.url("memories"), {**query, "page_size": "200"})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["next"] is None
    return {row["content"] for row in body["results"]}


@pytest.mark.django_db
def test_without_a_filter_every_memory_is_listed(acme: Tenant, memories: dict[str, str]) -> None:
    assert listed(acme) == set(LAYOUT)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("semantic", {"Prefers tea", "Used to live in Oslo"}),
        ("episodic", {"Went to Rome", "Maybe likes jazz"}),
        ("procedural", {"Answer in French"}),
    ],
)
def test_the_kind_filter_lists_only_that_kind(
    acme: Tenant, memories: dict[str, str], kind: str, expected: set[str]
) -> None:
    assert listed(acme, kind=kind) == expected


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("active", {"Prefers tea", "Went to Rome", "Answer in French"}),
        ("archived", {"Used to live in Oslo"}),
        ("pending_review", {"Maybe likes jazz"}),
    ],
)
def test_the_status_filter_lists_only_that_status(
    acme: Tenant, memories: dict[str, str], status: str, expected: set[str]
) -> None:
    assert listed(acme, status=status) == expected


@pytest.mark.django_db
def test_since_lists_the_memories_created_from_then_on(
    acme: Tenant, memories: dict[str, str]
) -> None:
    assert listed(acme, since="2024-02-15T00:00:00Z") == {
        "Used to live in Oslo", "Answer in French", "Maybe likes jazz",
    }  # fmt: skip


@pytest.mark.django_db
def test_until_lists_the_memories_created_before_then(
    acme: Tenant, memories: dict[str, str]
) -> None:
    assert listed(acme, until="2024-02-15T00:00:00Z") == {"Prefers tea", "Went to Rome"}


@pytest.mark.django_db
def test_since_includes_and_until_excludes_a_memory_created_at_that_instant(
    acme: Tenant, memories: dict[str, str]
) -> None:
    instant = "2024-02-10T00:00:00Z"  # when "Went to Rome" was created
    assert "Went to Rome" in listed(acme, since=instant)
    assert "Went to Rome" not in listed(acme, until=instant)


@pytest.mark.django_db
def test_since_and_until_together_list_the_window_between(
    acme: Tenant, memories: dict[str, str]
) -> None:
    window = listed(acme, since="2024-02-01T00:00:00Z", until="2024-03-01T00:00:00Z")
    assert window == {"Went to Rome", "Used to live in Oslo"}


@pytest.mark.django_db
def test_since_understands_a_time_zone_offset(acme: Tenant, memories: dict[str, str]) -> None:
    # 2024-02-10 01:00 in Paris is 2024-02-10 00:00 UTC: "Went to Rome" is at that instant.
    assert "Went to Rome" in listed(acme, since="2024-02-10T01:00:00+01:00")
    assert "Went to Rome" not in listed(acme, since="2024-02-10T00:00:01+00:00")


@pytest.mark.django_db
def test_the_filters_combine(acme: Tenant, memories: dict[str, str]) -> None:
    assert listed(acme, kind="semantic", status="active") == {"Prefers tea"}
    assert listed(acme, kind="episodic", since="2024-03-01T00:00:00Z") == {"Maybe likes jazz"}
    assert listed(acme, status="active", until="2024-03-01T00:00:00Z") == {
        "Prefers tea", "Went to Rome",
    }  # fmt: skip
