"""Refusals in the reader's language: every refusal an app raises is a template marked for
translation (never a bare string, an f-string or text translated at the raise), each marked
template has its Chinese, and the API's `message` stays English while a page's is Chinese."""

from __future__ import annotations

import ast
from pathlib import Path

from django.utils import translation
from django.utils.translation import gettext_noop

from memoryhub.exceptions import ApplicationError, NotFound
from tests.governance.test_catalog import entries

APPS = Path(__file__).resolve().parents[2] / "apps"
REFUSALS = {"ApplicationError", "NotFound"}


def calls(source: str) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)]


def named(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def unmarked_refusals(source: str) -> list[str]:
    """The source of each refusal whose message is not a marked template: a marked template
    is `gettext_noop("…")` or a name holding one (a table of them, a helper's argument)."""
    found = []
    for call in calls(source):
        if named(call) not in REFUSALS or not call.args:
            continue
        message = call.args[0]
        if isinstance(message, ast.Name):
            continue
        if isinstance(message, ast.Call) and named(message) == "gettext_noop":
            continue
        found.append(ast.unparse(message))
    return found


def marked_templates(source: str) -> list[str]:
    return [
        call.args[0].value
        for call in calls(source)
        if named(call) == "gettext_noop"
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ]


def sources() -> dict[Path, str]:
    return {path: path.read_text() for path in sorted(APPS.rglob("*.py"))}


def test_the_check_finds_an_unmarked_refusal() -> None:
    source = (
        'raise ApplicationError("plain")\n'
        'raise NotFound(f"No such {what}.")\n'
        'raise ApplicationError(_("translated at the raise"))\n'
        'raise ApplicationError(gettext_noop("marked"))\n'
        "raise ApplicationError(template, params={})\n"
    )
    assert unmarked_refusals(source) == [
        "'plain'",
        "f'No such {what}.'",
        "_('translated at the raise')",
    ]
    assert marked_templates(source) == ["marked"]


def test_it_marks_every_refusal_raised_in_the_apps() -> None:
    unmarked = [
        f"{path.relative_to(APPS)}: {message}"
        for path, source in sources().items()
        for message in unmarked_refusals(source)
    ]
    assert unmarked == []


def test_it_translates_every_marked_template() -> None:
    catalog = entries()
    templates = {template for source in sources().values() for template in marked_templates(source)}
    assert len(templates) > 100
    untranslated = sorted(template for template in templates if not catalog.get(template))
    assert untranslated == [], "run makemessages, fill the msgstrs, run msgfmt"


def test_it_keeps_the_message_english_and_says_it_in_the_reader_s_language() -> None:
    with translation.override("zh-hans"):
        error = ApplicationError(
            gettext_noop("A note has at most %(limit)s characters."), params={"limit": 500}
        )
        assert error.message == "A note has at most 500 characters."
        assert str(error) == error.message
        assert error.localized == "备注最多 500 个字符。"
    assert error.localized == "A note has at most 500 characters."


def test_a_template_without_params_is_left_as_written() -> None:
    error = NotFound(gettext_noop("Memory not found."))
    assert error.message == "Memory not found."
    assert error.status_code == 404
    with translation.override("zh-hans"):
        assert error.localized == "找不到该记忆。"
