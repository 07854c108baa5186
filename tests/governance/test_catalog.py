"""The Chinese catalog: every message translated, and the compiled .mo (what Django reads)
in step with the .po (what people edit)."""

from __future__ import annotations

import ast
import gettext
from pathlib import Path

CATALOG = Path(__file__).resolve().parents[2] / "locale" / "zh_Hans" / "LC_MESSAGES"


def entries() -> dict[str, str]:
    """msgid -> msgstr (msgstr[0] for plurals, keyed by the singular) of the .po file; a
    message with a context is keyed as gettext keys it, "context\x04msgid"."""
    found: dict[str, str] = {}
    text = (CATALOG / "django.po").read_text(encoding="utf-8")
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        name = ""
        for line in block.splitlines():
            if line.startswith("#"):
                continue
            if line.startswith('"'):
                fields[name] += ast.literal_eval(line)
                continue
            name, _, literal = line.partition(" ")
            fields[name] = ast.literal_eval(literal)
        msgid = fields.get("msgid")
        if msgid:  # the header's msgid is empty
            if "msgctxt" in fields:
                msgid = f"{fields['msgctxt']}\x04{msgid}"
            found[msgid] = fields.get("msgstr", fields.get("msgstr[0]", ""))
    return found


def test_it_translates_every_message() -> None:
    untranslated = [msgid for msgid, msgstr in entries().items() if not msgstr.strip()]
    assert len(entries()) > 150
    assert untranslated == []


def test_it_compiles_the_catalog_that_is_edited() -> None:
    with (CATALOG / "django.mo").open("rb") as compiled:
        catalog = gettext.GNUTranslations(compiled)
    stale = [
        msgid
        for msgid, msgstr in entries().items()
        if catalog._catalog.get(msgid, catalog._catalog.get((msgid, 0))) != msgstr  # type: ignore[attr-defined]
    ]
    assert stale == [], "run: manage.py compilemessages -l zh_Hans --ignore=.venv"
