import pytest
from django.test import Client


def assert_error_shape(body: dict, code: str) -> None:
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]


@pytest.mark.django_db
def test_the_openapi_schema_is_served() -> None:
    response = Client().get("/api/schema/", headers={"Accept": "application/vnd.oai.openapi+json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "MemoryHub API"


@pytest.mark.django_db
def test_the_api_docs_use_local_assets_only() -> None:
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn.jsdelivr" not in html
    assert "unpkg.com" not in html


@pytest.mark.django_db
def test_unknown_api_urls_get_a_json_404_in_the_error_shape() -> None:
    response = Client().get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert_error_shape(response.json(), "not_found")


@pytest.mark.urls("tests.foundation.error_urls")
class TestErrorShape:
    def test_validation_errors_name_the_field(self) -> None:
        response = Client().post("/api/test/echo", {"count": -1}, content_type="application/json")
        assert response.status_code == 400
        body = response.json()
        assert_error_shape(body, "validation_error")
        assert "count" in body["error"]["details"]

    def test_malformed_json_is_a_parse_error(self) -> None:
        response = Client().post("/api/test/echo", "{nope", content_type="application/json")
        assert response.status_code == 400
        assert_error_shape(response.json(), "parse_error")

    def test_application_errors_keep_code_status_and_details(self) -> None:
        response = Client().post("/api/test/echo", {"count": 13}, content_type="application/json")
        assert response.status_code == 409
        assert response.json() == {
            "error": {"code": "unlucky", "message": "Unlucky.", "details": {"count": 13}}
        }

    def test_a_bug_in_an_api_view_is_a_json_500_without_a_trace(self) -> None:
        client = Client(raise_request_exception=False)
        response = client.get("/api/test/broken")
        assert response.status_code == 500
        assert_error_shape(response.json(), "server_error")
        assert "a bug" not in response.content.decode()

    def test_the_database_out_of_reach_is_a_json_503_with_retry_after(self) -> None:
        response = Client(raise_request_exception=False).get("/api/test/database-down")
        assert response.status_code == 503
        assert response["Retry-After"] == "5"
        assert_error_shape(response.json(), "service_unavailable")
        assert "/secret/path" not in response.content.decode()

    def test_the_database_out_of_reach_is_the_html_503_in_a_page(self) -> None:
        response = Client(raise_request_exception=False, HTTP_ACCEPT_LANGUAGE="zh-hans").get(
            "/database-down-page/"
        )
        assert response.status_code == 503
        assert response["Retry-After"] == "5"
        html = response.content.decode()
        assert "暂时无法使用" in html
        assert "connection already closed" not in html

    def test_a_bug_in_a_page_is_the_html_500(self) -> None:
        response = Client(raise_request_exception=False).get("/broken-page/")
        assert response.status_code == 500
        html = response.content.decode()
        assert "Something went wrong" in html
        assert "a bug" not in html
