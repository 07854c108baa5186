"""Every data table in the templates stacks on a phone (static/css/memoryhub.css, table.stack):
it carries the class, and each of its body cells names its column in data-label, which the
phone shows as the cell's label. A cell spanning the row (an empty state) needs none."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from django.conf import settings

from memoryhub.templatetags.tables import headed

TEMPLATES = Path(settings.BASE_DIR) / "templates"
# Three short columns of figures fit a phone's width as they are.
FITS_A_PHONE = {("dashboard/playground/playground.html", "numbers")}


@dataclass
class Table:
    template: str
    classes: list[str]
    cells: list[dict[str, str | None]] = field(default_factory=list)  # the body's td and th


class Tables(HTMLParser):
    def __init__(self, template: str) -> None:
        super().__init__()
        self.template = template
        self.found: list[Table] = []
        self.in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "table":
            self.found.append(Table(self.template, (named.get("class") or "").split()))
        elif tag == "tbody":
            self.in_body = True
        elif tag in ("td", "th") and self.in_body and self.found:
            self.found[-1].cells.append(named)

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self.in_body = False


def tables() -> list[Table]:
    found: list[Table] = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        parser = Tables(str(path.relative_to(TEMPLATES)))
        parser.feed(path.read_text())
        found += parser.found
    return found


def test_it_finds_the_tables() -> None:
    names = {table.template for table in tables()}
    assert {
        "dashboard/audit/log.html",
        "privacy/blocked.html",
        "dashboard/keys/api_keys.html",
    } <= names


def test_it_stacks_every_data_table() -> None:
    flat = [
        (table.template, table.classes)
        for table in tables()
        if "stack" not in table.classes
        and not any((table.template, name) in FITS_A_PHONE for name in table.classes)
    ]
    assert flat == []


def test_it_labels_every_body_cell_of_a_stacked_table() -> None:
    unlabelled = [
        (table.template, cell)
        for table in tables()
        if "stack" in table.classes
        for cell in table.cells
        if "data-label" not in cell and "colspan" not in cell
    ]
    assert unlabelled == []


def test_it_heads_each_cell_of_a_row_from_data() -> None:
    assert headed(["12-01", "3"], ["Day", "Turns"]) == [("Day", "12-01"), ("Turns", "3")]
    assert headed(["12-01", "3", "1"], ["Day", "Turns"])[2] == ("", "1")  # no heading
    assert headed(["12-01"], ["Day", "Turns"]) == [("Day", "12-01")]


class ScrollRegions(HTMLParser):
    """Each `div.table-scroll`'s attributes (a table wider than the screen scrolls in it)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "div" and "table-scroll" in (named.get("class") or "").split():
            self.found.append(named)


def test_every_scrolling_table_can_be_reached_from_the_keyboard_and_is_named() -> None:
    """axe's scrollable-region-focusable: a region that scrolls takes focus (tabindex 0) and
    says what it holds (a role and a name), on every page, whether or not the data at hand
    makes it overflow."""
    unreachable = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        parser = ScrollRegions()
        parser.feed(path.read_text())
        for region in parser.found:
            named = region.get("aria-label") or region.get("aria-labelledby")
            if region.get("tabindex") != "0" or region.get("role") != "region" or not named:
                unreachable.append((str(path.relative_to(TEMPLATES)), region))
    assert unreachable == []
