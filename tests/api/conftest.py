"""Fixtures of the API tests."""

from __future__ import annotations

import pytest

from tests.conftest import Tenant


@pytest.fixture
def memory_id(acme: Tenant) -> str:
    """The id of one memory of acme's subject "u1", made through the API."""
    response = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "Likes tea"}, format="json"
    )
    assert response.status_code == 201
    return str(response.json()["id"])
