"""Splitting long text into overlapping chunks on semantic boundaries (pure: no Django).

Paragraphs (blank lines) are the preferred boundaries, then sentences, then words: a chunk
holds whole paragraphs while they fit, a paragraph too long for one chunk is split into
sentences, and a sentence too long into runs of words. Each chunk after the first starts
with the last sentences of the previous one, up to `overlap` tokens, so a fact cut by a
boundary is whole in one of them. Token counts come from the given counter (an exact BPE
encoding in production).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_PARAGRAPHS = re.compile(r"\n\s*\n")
# A sentence ends at . ! ? (and closing quotes/brackets) followed by whitespace.
_SENTENCE_END = re.compile("(?<=[.!?])([\"'\u201d\u2019)\\]]*)\\s+")  # group 1 stays


@dataclass(frozen=True)
class Chunk:
    text: str
    index: int
    tokens: int
    start: int  # character offsets of the chunk's own (non-overlap) text in the input
    end: int


@dataclass(frozen=True)
class _Unit:
    text: str
    tokens: int
    start: int
    end: int
    paragraph_end: bool


def _spans(text: str, pattern: re.Pattern[str], offset: int) -> list[tuple[int, int]]:
    spans, last = [], 0
    for match in pattern.finditer(text):
        piece_end = match.end(1) if pattern.groups else match.start()
        spans.append((offset + last, offset + piece_end))
        last = match.end()
    spans.append((offset + last, offset + len(text)))
    return spans


def _units(text: str, size: int, count: Callable[[str], int]) -> list[_Unit]:
    units: list[_Unit] = []
    for p_start, p_end in _spans(text, _PARAGRAPHS, 0):
        paragraph = text[p_start:p_end]
        if not paragraph.strip():
            continue
        pieces: list[tuple[int, int]] = []
        if count(paragraph) <= size:
            pieces = [(p_start, p_end)]
        else:
            for s_start, s_end in _spans(paragraph, _SENTENCE_END, p_start):
                sentence = text[s_start:s_end]
                if not sentence.strip():
                    continue
                if count(sentence) <= size:
                    pieces.append((s_start, s_end))
                else:
                    pieces.extend(_word_runs(text, s_start, s_end, size, count))
        for i, (start, end) in enumerate(pieces):
            piece = text[start:end].strip()
            if piece:
                units.append(_Unit(piece, count(piece), start, end, i == len(pieces) - 1))
    return units


def _word_runs(
    text: str, start: int, end: int, size: int, count: Callable[[str], int]
) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", text[start:end])]
    run_start = None
    run_end = start
    for w_start, w_end in words:
        if run_start is None:
            run_start = w_start
        elif count(text[run_start:w_end]) > size:
            runs.append((run_start, run_end))
            run_start = w_start
        run_end = w_end
    if run_start is not None:
        runs.append((run_start, run_end))
    return runs


def chunk_text(text: str, *, size: int, overlap: int, count: Callable[[str], int]) -> list[Chunk]:
    """Chunks of at most `size` tokens (as `count` measures them, joined with blank lines or
    spaces), each starting with up to `overlap` tokens of the previous chunk's end."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError("need size >= 1 and 0 <= overlap < size")
    units = _units(text, size, count)
    chunks: list[Chunk] = []
    current: list[_Unit] = []
    carried: list[_Unit] = []

    def render(parts: list[_Unit]) -> str:
        out = ""
        for i, unit in enumerate(parts):
            if i:
                out += "\n\n" if parts[i - 1].paragraph_end else " "
            out += unit.text
        return out

    def flush() -> None:
        nonlocal current, carried
        own = [u for u in current if u not in carried]
        if not own:
            return
        body = render(current)
        chunks.append(Chunk(body, len(chunks), count(body), own[0].start, own[-1].end))
        # The next chunk opens with the tail of this one, whole sentences, up to `overlap`.
        tail: list[_Unit] = []
        for unit in reversed(current):
            if count(render([unit, *tail])) > overlap:
                break
            tail.insert(0, unit)
        carried = tail
        current = list(tail)

    for unit in units:
        if current and count(render([*current, unit])) > size:
            flush()
            if current and count(render([*current, unit])) > size:
                current, carried = [], []  # the overlap cannot fit with this unit: drop it
        current.append(unit)
    flush()
    return chunks
