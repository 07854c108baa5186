"""The extractor on the dashboard: a namespace's choice on its settings page (owners only,
previewed, audited, the LLM refused where the server has no endpoint), the extractor in use
and the LLM's counters on the overview, the banner every page shows while the LLM cannot be
reached, and who extracted a fact on its page."""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import dateformat, timezone

from apps.audit.actors import Actor
from apps.memories.models import Memory
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_update
from apps.pipeline import llm_health
from apps.pipeline.selectors import extractor_in_use, extractor_outage
from memoryhub.exceptions import ApplicationError
from tests.audit_events import no_event, one_event
from tests.governance.conftest import Cast

LLM_URL = "http://127.0.0.1:11434/v1"
SETTINGS = {
    "name": "Acme",
    "description": "",
    "pii_policy": "allow",
    "recency_half_life_days": "180.0",
    "erasure_grace_days": "0",
    "extractor": "",
}
WITH_LLM = override_settings(
    MEMORYHUB_LLM_URL=LLM_URL,
    MEMORYHUB_LLM_MODEL="qwen2.5:7b",
    MEMORYHUB_LLM_BREAKER_FAILURES=1,
)
NO_LLM = override_settings(MEMORYHUB_LLM_URL="", MEMORYHUB_EXTRACTOR="offline")


@pytest.fixture
def with_llm() -> Iterator[None]:
    with WITH_LLM:
        yield


@pytest.fixture
def no_llm() -> Iterator[None]:
    with NO_LLM:
        yield


def _choose(namespace: Namespace, extractor: str) -> None:
    namespace_update(actor=Actor.system("tests"), namespace=namespace, extractor=extractor)


# --- The settings page ------------------------------------------------------------------------


def test_it_offers_the_server_default_by_name(cast: Cast, no_llm: None) -> None:
    page = cast.client("olive").get("/n/acme/settings/").content.decode()
    assert '<option value="" selected>Server default (Rules)</option>' in page
    assert '<option value="llm">LLM</option>' in page


def test_it_previews_then_saves_the_owners_choice_audited(cast: Cast, with_llm: None) -> None:
    client = cast.client("olive")
    with no_event():
        preview = client.post("/n/acme/settings/", {**SETTINGS, "extractor": "llm"})
    assert "New conversations are read by: LLM" in preview.content.decode()
    assert Namespace.objects.get(pk=cast.acme.pk).extractor == ""
    with one_event("namespace.update") as events:
        saved = client.post("/n/acme/settings/", {**SETTINGS, "extractor": "llm", "confirm": "1"})
    assert saved.status_code == 302
    assert Namespace.objects.get(pk=cast.acme.pk).extractor == "llm"
    assert events[0].details == {"fields": ["extractor"]}  # which field, not its value


def test_it_goes_back_to_the_server_default(cast: Cast, with_llm: None) -> None:
    _choose(cast.acme, "both")
    client = cast.client("olive")
    preview = client.post("/n/acme/settings/", SETTINGS).content.decode()
    assert "the server&#x27;s default extractor (Rules)" in preview
    with one_event("namespace.update"):
        client.post("/n/acme/settings/", {**SETTINGS, "confirm": "1"})
    assert Namespace.objects.get(pk=cast.acme.pk).extractor == ""


@pytest.mark.parametrize("name", ["eddie", "vera"])
def test_it_refuses_the_choice_to_editors_and_viewers(
    cast: Cast, with_llm: None, name: str
) -> None:
    client = cast.client(name)
    with no_event():
        assert client.get("/n/acme/settings/").status_code == 403
        body = {**SETTINGS, "extractor": "llm", "confirm": "1"}
        assert client.post("/n/acme/settings/", body).status_code == 403
    assert Namespace.objects.get(pk=cast.acme.pk).extractor == ""


def test_it_answers_404_to_an_outsider(cast: Cast, with_llm: None) -> None:
    client = cast.client("oscar")
    with no_event():
        assert client.get("/n/acme/settings/").status_code == 404
        body = {**SETTINGS, "extractor": "llm", "confirm": "1"}
        assert client.post("/n/acme/settings/", body).status_code == 404
    assert Namespace.objects.get(pk=cast.acme.pk).extractor == ""


@pytest.mark.parametrize("extractor", ["llm", "both"])
def test_it_refuses_the_llm_without_an_endpoint(cast: Cast, no_llm: None, extractor: str) -> None:
    with no_event():
        response = cast.client("olive").post(
            "/n/acme/settings/", {**SETTINGS, "extractor": extractor, "confirm": "1"}
        )
    assert response.status_code == 200
    page = response.content.decode()
    assert "This server has no LLM endpoint (MEMORYHUB_LLM_URL is not set)" in page
    assert "Before you save" not in page  # no preview of a refused choice
    assert Namespace.objects.get(pk=cast.acme.pk).extractor == ""


def test_it_refuses_the_llm_without_an_endpoint_in_the_service(cast: Cast, no_llm: None) -> None:
    with no_event(), pytest.raises(ApplicationError) as refused:
        _choose(cast.acme, "llm")
    assert refused.value.details == {"extractor": ["no LLM endpoint"]}


def test_it_refuses_an_unknown_extractor_in_the_service(cast: Cast, with_llm: None) -> None:
    with no_event(), pytest.raises(ApplicationError):
        _choose(cast.acme, "oracle")


def test_it_keeps_a_saved_llm_choice_when_other_settings_change(cast: Cast) -> None:
    with WITH_LLM:
        _choose(cast.acme, "llm")
    with NO_LLM, one_event("namespace.update") as events:
        body = {**SETTINGS, "extractor": "llm", "name": "Acme Inc", "confirm": "1"}
        cast.client("olive").post("/n/acme/settings/", body)
    assert events[0].details == {"fields": ["name"]}


# --- The extractor in use, on the overview ----------------------------------------------------


def test_it_reports_the_servers_default_without_a_namespace(cast: Cast, with_llm: None) -> None:
    with override_settings(MEMORYHUB_EXTRACTOR="both"):
        found = extractor_in_use()
    assert (found.kind, found.model, found.host, found.own) == (
        "both",
        "qwen2.5:7b",
        "127.0.0.1",
        False,
    )


def test_it_reports_the_namespaces_own_choice(cast: Cast, with_llm: None) -> None:
    _choose(cast.acme, "llm")
    found = extractor_in_use(namespace=Namespace.objects.get(pk=cast.acme.pk))
    assert (found.kind, found.own) == ("llm", True)
    assert extractor_in_use(namespace=cast.globex).kind == "offline"


def test_it_reports_the_rules_when_the_server_has_no_endpoint(cast: Cast) -> None:
    with WITH_LLM:
        _choose(cast.acme, "llm")
    with NO_LLM:
        found = extractor_in_use(namespace=Namespace.objects.get(pk=cast.acme.pk))
    assert (found.kind, found.own) == ("offline", True)


def test_it_shows_the_namespaces_extractor_and_the_llm_counters(cast: Cast, with_llm: None) -> None:
    _choose(cast.acme, "both")
    llm_health.call_succeeded(LLM_URL, 0.5)
    llm_health.call_succeeded(LLM_URL, 1.5)
    llm_health.call_succeeded(LLM_URL, 2.0)
    llm_health.call_failed(LLM_URL)
    llm_health.call_succeeded(LLM_URL, 0.25)  # closes the breaker again
    llm_health.fallback_used()
    llm_health.facts_refused({"ungrounded": 2, "off_vocabulary": 1})
    page = cast.client("vera").get("/n/acme/").content.decode()
    assert "by the rules, then by an LLM on the changes they leave unresolved: qwen2.5:7b" in page
    assert "This namespace's own choice." in page
    assert '<dd data-counter="calls">5</dd>' in page
    assert '<dd data-counter="failures">1</dd>' in page
    assert '<dd data-counter="fallbacks">1</dd>' in page
    assert '<dd data-counter="p50">1.00 s</dd>' in page
    assert "outside the vocabularies: 1" in page
    assert "evidence not in the turn: 2" in page


def test_it_shows_no_llm_counters_where_the_rules_extract(cast: Cast, with_llm: None) -> None:
    _choose(cast.globex, "llm")  # another namespace's choice is not acme's
    llm_health.call_succeeded(LLM_URL, 0.5)
    page = cast.client("olive").get("/n/acme/").content.decode()
    assert "extracted by the offline rules" in page
    assert "The server's default." in page
    assert 'id="llm-counters"' not in page


# --- The banner ------------------------------------------------------------------------------


def _break() -> None:
    llm_health.call_failed(LLM_URL)  # MEMORYHUB_LLM_BREAKER_FAILURES=1: the breaker opens


@pytest.fixture
def llm_default(with_llm: None) -> Iterator[None]:
    with override_settings(MEMORYHUB_EXTRACTOR="llm"):
        yield


@pytest.mark.parametrize("path", ["/", "/n/acme/", "/n/acme/memories/", "/n/acme/settings/"])
def test_it_shows_the_outage_banner_on_every_page(cast: Cast, llm_default: None, path: str) -> None:
    _break()
    page = cast.client("olive").get(path).content.decode()
    assert 'id="llm-outage"' in page
    assert "LLM extractor unreachable since" in page
    assert "rules in use" in page


def test_it_says_since_when_in_the_viewers_time_zone(cast: Cast, llm_default: None) -> None:
    _break()
    since = llm_health.breaker_status().since
    assert since is not None
    client = cast.client("olive")
    client.cookies["tz"] = "Asia/Shanghai"
    page = client.get("/n/acme/").content.decode()
    with timezone.override(zoneinfo.ZoneInfo("Asia/Shanghai")):
        local = timezone.localtime(since)
        at = dateformat.format(
            local, "H:i T" if local.date() == timezone.localdate() else "Y-m-d H:i T"
        )
    assert f"LLM extractor unreachable since {at}, rules in use" in page


def test_it_shows_no_banner_while_the_breaker_is_closed(cast: Cast, llm_default: None) -> None:
    llm_health.call_succeeded(LLM_URL, 0.3)
    assert 'id="llm-outage"' not in cast.client("olive").get("/n/acme/").content.decode()


def test_it_shows_no_banner_in_a_namespace_that_uses_the_rules(
    cast: Cast, llm_default: None
) -> None:
    _choose(cast.acme, "offline")
    _break()
    assert 'id="llm-outage"' not in cast.client("olive").get("/n/acme/").content.decode()
    # the server's default (the LLM) on a page of no namespace
    assert 'id="llm-outage"' in cast.client("olive").get("/audit/").content.decode()


def test_it_shows_the_banner_where_the_namespace_chose_the_llm(cast: Cast, with_llm: None) -> None:
    _choose(cast.acme, "both")  # the server's default is the rules
    _break()
    client = cast.client("olive")
    assert 'id="llm-outage"' in client.get("/n/acme/memories/").content.decode()
    assert 'id="llm-outage"' not in client.get("/audit/").content.decode()


def test_it_costs_the_banner_no_query(cast: Cast, llm_default: None) -> None:
    client = cast.client("olive")
    client.get("/n/acme/memories/")  # warm: the session, the overview's rollups
    with CaptureQueriesContext(connection) as closed:
        client.get("/n/acme/memories/")
    _break()
    with CaptureQueriesContext(connection) as opened:
        page = client.get("/n/acme/memories/").content.decode()
    assert 'id="llm-outage"' in page
    assert len(opened) == len(closed)


def test_it_shows_no_banner_to_someone_signed_out(cast: Cast, llm_default: None) -> None:
    _break()
    assert extractor_outage() is not None
    assert 'id="llm-outage"' not in cast.client("olive").get("/accounts/login/").content.decode()


# --- Who extracted a fact ----------------------------------------------------------------------


def _extracted(memory: Memory, **source: str) -> None:
    Memory.objects.filter(pk=memory.pk).update(
        source={"session": "s1", "message": "m1", "extractor": "fact", **source}
    )


def test_it_says_an_llm_extracted_a_fact(cast: Cast) -> None:
    _extracted(cast.fact, model="qwen2.5:7b")
    page = cast.client("vera").get(f"/n/acme/memories/{cast.fact.pk}/").content.decode()
    assert '<p id="extracted-by">Extracted by: LLM (qwen2.5:7b)</p>' in page


def test_it_says_the_rules_extracted_a_fact(cast: Cast) -> None:
    _extracted(cast.fact)
    page = cast.client("vera").get(f"/n/acme/memories/{cast.fact.pk}/").content.decode()
    assert '<p id="extracted-by">Extracted by: rules</p>' in page


def test_it_names_no_extractor_for_a_memory_written_directly(cast: Cast) -> None:
    page = cast.client("vera").get(f"/n/acme/memories/{cast.shared.pk}/").content.decode()
    assert 'id="extracted-by"' not in page
