import pytest

from tests.conftest import Tenant


@pytest.mark.django_db
def test_it_creates_and_reads_back_a_memory(acme: Tenant) -> None:
    response = acme.client.post(
        acme.url("memories"),
        {
            "subject": "user-1",
            "content": "Prefers tea over coffee",
            "kind": "semantic",
            "tags": ["drinks"],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["content"] == "Prefers tea over coffee"
    assert body["subject"] == "user-1"
    assert body["version"] == 1
    assert "embedding" not in body
    again = acme.client.get(acme.url(f"memories/{body['id']}"))
    assert again.status_code == 200
    assert again.json()["content"] == "Prefers tea over coffee"
