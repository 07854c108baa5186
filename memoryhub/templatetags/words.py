"""Words the product writes into its own records (status words, roles, strategies, reasons,
the system actors' names), said in the reader's language. Records and API answers keep
the English value; only pages translate it.

    {% load words %}{{ turn.role|said }}  {{ version.changed_by|actor }}
"""

from __future__ import annotations

from django import template
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from memoryhub.words import WORDS

register = template.Library()


@register.filter
def said(value: object, area: str = "") -> str:
    """A value the product wrote, in the reader's language: a known word (of `area` first,
    where one word means two things: `{{ recall.purpose|said:"purpose" }}`), or a reason
    the product records (marked for translation where it is written), else the value."""
    text = str(value)
    if f"{area}:{text}" in WORDS:
        return str(WORDS[f"{area}:{text}"])
    if text in WORDS:
        return str(WORDS[text])
    return gettext(text) if text else text


SYSTEM_NAMES = {"job": _("a background job")}


@register.filter
def actor(display: object) -> str:
    """Who acted, from an actor's `type:name` display ("user:alice", "system:write
    pipeline", "api_key:Support bot"), as a reader would name them."""
    kind, _sep, name = str(display).partition(":")
    if kind == "user":
        return name
    if kind == "api_key":
        return gettext("app “%(name)s”") % {"name": name}
    if kind == "subject":
        return gettext("the person, in the privacy portal")
    if kind == "system":
        head = name.split(":", 1)[0]
        if head in SYSTEM_NAMES and ":" in name:
            return str(SYSTEM_NAMES[head])
        return gettext(name) if name else gettext("MemoryHub")
    return str(display)
