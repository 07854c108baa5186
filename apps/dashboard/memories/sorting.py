"""The explorer's order as a form (`?sort=-created`), and its columns' links."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from apps.governance.sorting import DEFAULT, ORDERS, RELEVANCE

COLUMNS = ("created", "updated", "importance")  # the list's columns that order it


class SortForm(forms.Form):
    """The order chosen; blank is the default (newest first; a search's most relevant)."""

    sort = forms.ChoiceField(
        label=_("Order"),
        required=False,
        choices=[("", _("Default")), *((key, order.label) for key, order in ORDERS.items())],
    )

    def __init__(self, *args: Any, searching: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.searching = searching

    def clean_sort(self) -> str:
        value: str = self.cleaned_data["sort"]
        if value == RELEVANCE and not self.searching:
            raise forms.ValidationError(_("Relevance orders search hits only: newest first."))
        return value

    def chosen(self) -> str:
        """The order to apply: the valid choice, else the default."""
        value = self.cleaned_data.get("sort") if self.is_valid() else ""
        return value or (RELEVANCE if self.searching else DEFAULT)


def column_links(query: QueryDict, current: str) -> dict[str, dict[str, str]]:
    """For each column that orders the list: the address ordering by it (descending first;
    the current column's flips) from the first page, and its `aria-sort` ("" when not
    the order)."""
    kept = query.copy()
    for name in ("sort", "after", "before"):
        kept.pop(name, None)
    links = {}
    for column in COLUMNS:
        active = current.lstrip("-") == column
        descending = current.startswith("-")
        kept["sort"] = column if active and descending else f"-{column}"
        state = ("descending" if descending else "ascending") if active else ""
        links[column] = {"href": f"?{kept.urlencode()}", "aria_sort": state}
    return links
