"""The quality pages' forms when posted: a form shown on the overview goes back there with
what was wrong (its fields by label, or the service's refusal) and nothing is kept; a form on
the page that shows it is shown again; success says so and opens what was made."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from apps.audit.actors import Actor
from apps.evaluation.models import EvalCase, EvalRun, EvalSet
from apps.evaluation.services import eval_set_create_empty
from tests.governance.conftest import Cast

ACTOR = Actor.system("tests")


def said(response: Any) -> list[tuple[str, str]]:
    """The messages a response leaves for the next page: (level, text)."""
    return [(message.level_tag, str(message)) for message in get_messages(response.wsgi_request)]


def upload(cast: Cast, content: bytes, name: str = "typed") -> Any:
    data = {"name": name, "format": "jsonl", "file": SimpleUploadedFile("set.jsonl", content)}
    return cast.client("eddie").post(reverse("dashboard:quality:set_import", args=["acme"]), data)


def test_an_import_without_a_name_goes_back_naming_the_field(cast: Cast) -> None:
    response = upload(cast, b'{"question": "q"}', name="")
    assert response["Location"] == reverse("dashboard:quality:overview", args=["acme"])
    assert said(response) == [
        ("error", "The import was not started: Name: This field is required.")
    ]
    assert not EvalSet.objects.exists()


def test_a_file_that_is_not_utf8_goes_back_saying_so(cast: Cast) -> None:
    response = upload(cast, b"\xff\xfe\x00")
    assert response["Location"] == reverse("dashboard:quality:overview", args=["acme"])
    assert said(response) == [("error", "The file is not UTF-8 text.")]
    assert not EvalSet.objects.exists()


def test_an_import_the_service_refuses_goes_back_with_its_refusal(cast: Cast) -> None:
    response = upload(cast, b'{"question": "q"}\nnot json')
    assert response["Location"] == reverse("dashboard:quality:overview", args=["acme"])
    assert said(response) == [("error", "line 2: not JSON.")]
    assert not EvalSet.objects.exists()


def test_an_import_opens_the_new_set_counting_its_cases(cast: Cast) -> None:
    lines = [{"question": "Which tea?", "subject": "u1"}, {"question": "Where?"}]
    response = upload(cast, "\n".join(json.dumps(line) for line in lines).encode())
    eval_set = EvalSet.objects.get(name="typed")
    assert response["Location"] == reverse("dashboard:quality:set", args=["acme", eval_set.pk])
    assert said(response) == [("success", "Imported 2 cases.")]


def test_a_name_already_taken_goes_back_and_makes_nothing(cast: Cast) -> None:
    eval_set_create_empty(actor=ACTOR, namespace=cast.acme, name="mine")
    url = reverse("dashboard:quality:set_create", args=["acme"])
    response = cast.client("eddie").post(url, {"name": "mine"})
    assert response["Location"] == reverse("dashboard:quality:overview", args=["acme"])
    assert said(response) == [("error", "This namespace has an eval set of that name.")]
    assert EvalSet.objects.count() == 1


def test_a_variant_with_missing_fields_goes_back_to_the_variants(cast: Cast) -> None:
    url = reverse("dashboard:quality:variant_save", args=["acme"])
    response = cast.client("eddie").post(url, {"name": "half"})
    assert (
        response["Location"] == reverse("dashboard:quality:overview", args=["acme"]) + "#variants"
    )
    ((level, text),) = said(response)
    assert level == "error"
    assert "Results (k): This field is required." in text.split("; ")


def test_a_run_with_a_bad_budget_shows_the_set_page_again(cast: Cast) -> None:
    eval_set = eval_set_create_empty(actor=ACTOR, namespace=cast.acme, name="mine")
    url = reverse("dashboard:quality:set", args=["acme", eval_set.pk])
    response = cast.client("eddie").post(url, {"token_budget": "5"})
    assert response.status_code == 200
    assert response.context["form"].errors["token_budget"]
    assert said(response) == []
    assert not EvalRun.objects.exists()


def test_a_case_from_a_recall_the_service_refuses_shows_the_form_again(cast: Cast) -> None:
    eval_set = eval_set_create_empty(actor=ACTOR, namespace=cast.acme, name="mine")
    url = reverse("dashboard:quality:case_from_recall", args=["acme", cast.recall.pk])
    response = cast.client("eddie").post(url, {"eval_set": str(eval_set.pk)})
    assert response.status_code == 200  # the recall's query was never kept
    assert said(response) == [("error", "This recall's query is no longer kept.")]
    assert not EvalCase.objects.exists()


def test_a_file_nested_too_deep_goes_back_naming_the_depth(cast: Cast) -> None:
    deep = ("[" * 400_000 + "]" * 400_000).encode()
    data = {"name": "deep", "format": "locomo", "subject": "u1",
            "file": SimpleUploadedFile("set.json", deep)}  # fmt: skip
    response = cast.client("eddie").post(
        reverse("dashboard:quality:set_import", args=["acme"]), data
    )
    assert response["Location"] == reverse("dashboard:quality:overview", args=["acme"])
    assert said(response) == [("error", "The file is nested deeper than 64 levels.")]
    assert not EvalSet.objects.exists()


def test_a_line_nested_too_deep_goes_back_naming_the_line(cast: Cast) -> None:
    line = '{"question": "q", "category": ' + "[" * 5_000 + "]" * 5_000 + "}"
    response = upload(cast, b'{"question": "q"}\n' + line.encode())
    assert said(response) == [("error", "line 2: nested deeper than 64 levels.")]
    assert not EvalSet.objects.exists()
    assert not EvalCase.objects.exists()
