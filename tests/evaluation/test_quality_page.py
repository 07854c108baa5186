"""The quality page's markup: its four forms each have their own ids, so every label points
at its own form's field."""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser

from tests.governance.conftest import Cast


class Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.label_targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append(str(found["id"]))
        if tag == "label" and found.get("for"):
            self.label_targets.append(str(found["for"]))


def test_every_id_on_the_quality_page_is_unique_and_every_label_finds_its_field(
    cast: Cast,
) -> None:
    response = cast.client("olive").get("/n/acme/quality/")
    assert response.status_code == 200
    parsed = Ids()
    parsed.feed(response.content.decode())
    assert [i for i, n in Counter(parsed.ids).items() if n > 1] == []
    assert {"import-name", "feedback-name", "empty-set-name", "variant-name"} <= set(parsed.ids)
    assert set(parsed.label_targets) <= set(parsed.ids)
