import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

DASHBOARD_PAGES = [
    "dashboard:overview:index",
    "dashboard:overview:namespaces",
    "dashboard:memories:pick",
    "dashboard:playground:index",
    "dashboard:quality:pick",
    "dashboard:audit:log",
    "dashboard:keys:list",
]


@pytest.mark.django_db
@pytest.mark.parametrize("page", DASHBOARD_PAGES)
def test_it_redirects_anonymous_users_to_login(client: Client, page: str) -> None:
    url = reverse(page)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('dashboard:account:login')}?next={url}"


@pytest.mark.django_db
@pytest.mark.parametrize("page", DASHBOARD_PAGES)
def test_it_shows_every_page_with_the_navigation(alice_client: Client, page: str) -> None:
    response = alice_client.get(reverse(page))
    assert response.status_code == 200
    html = response.content.decode()
    for label in (
        "Overview",
        "Namespaces",
        "Memories",
        "Playground",
        "Quality",
        "Audit",
        "API keys",
    ):
        assert f">{label}</a>" in html
    assert 'aria-current="page"' in html


@pytest.mark.django_db
def test_login_works_and_lands_on_the_overview(client: Client, alice: User) -> None:
    response = client.post(
        reverse("dashboard:account:login"), {"username": "alice", "password": "alice-password-1"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:overview:index")
    overview = client.get(reverse("dashboard:overview:index"))
    assert overview.status_code == 200
    assert "System status" in overview.content.decode()


@pytest.mark.django_db
def test_login_with_a_wrong_password_fails(client: Client, alice: User) -> None:
    response = client.post(
        reverse("dashboard:account:login"), {"username": "alice", "password": "nope"}
    )
    assert response.status_code == 200
    assert "didn't match" in response.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_logout_ends_the_session(alice_client: Client) -> None:
    response = alice_client.post(reverse("dashboard:account:logout"))
    assert response.status_code == 302
    assert alice_client.get(reverse("dashboard:overview:index")).status_code == 302


@pytest.mark.django_db
def test_pages_load_htmx_locally_and_send_the_csrf_header(alice_client: Client) -> None:
    html = alice_client.get(reverse("dashboard:overview:index")).content.decode()
    assert "/static/vendor/htmx/htmx-2.0.11.min.js" in html
    assert 'hx-headers=\'{"X-CSRFToken": "' in html
    assert "https://" not in html


@pytest.mark.django_db
def test_the_overview_status_panel_is_a_partial_for_htmx(alice_client: Client) -> None:
    response = alice_client.get(reverse("dashboard:overview:index"), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="status"')
    assert "<nav" not in html


@pytest.mark.django_db
def test_unknown_pages_get_the_html_404(alice_client: Client) -> None:
    response = alice_client.get("/no-such-page/")
    assert response.status_code == 404
    assert "Not found" in response.content.decode()


@pytest.mark.django_db
def test_the_overview_shows_system_status_to_staff_only(alice_client: Client) -> None:
    carol = User.objects.create_user("carol", password="carol-password-1")  # member of nothing
    client = Client()
    client.force_login(carol)
    html = client.get(reverse("dashboard:overview:index")).content.decode()
    assert "System status" not in html
    assert "pgvector" not in html
    assert "not a member of any namespace" in html
    partial = client.get(reverse("dashboard:overview:index"), headers={"HX-Request": "true"})
    assert "Database" not in partial.content.decode()
    assert "System status" in alice_client.get(reverse("dashboard:overview:index")).content.decode()
