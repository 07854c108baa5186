"""Word-level differences between two texts, for showing a memory's versions.

Pure: no Django. Words are runs of letters or digits; each CJK character is a word of its
own (Chinese has no spaces), and so is each other non-space character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

_TOKEN = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]"
    r"|[^\W\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+"
    r"|\s+|[^\w\s]"
)


@dataclass(frozen=True)
class Piece:
    """A run of the diff: `op` is "same", "added" or "removed"."""

    op: str
    text: str


def words(text: str) -> list[str]:
    """The text cut into words, spaces and marks; joined again they give the text back."""
    return _TOKEN.findall(text)


def word_diff(before: str, after: str) -> list[Piece]:
    """The pieces that turn `before` into `after`: unchanged, removed and added runs, in
    reading order (a replacement is its removed run, then its added run)."""
    old, new = words(before), words(after)
    pieces: list[Piece] = []
    matcher = SequenceMatcher(a=old, b=new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            pieces.append(Piece("same", "".join(old[i1:i2])))
            continue
        if i2 > i1:
            pieces.append(Piece("removed", "".join(old[i1:i2])))
        if j2 > j1:
            pieces.append(Piece("added", "".join(new[j1:j2])))
    return pieces
