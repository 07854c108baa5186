"""A progress bar for long commands (on their stderr): a line redrawn in place on a terminal,
a line every tenth of the way elsewhere (logs keep a few lines, not thousands)."""

from __future__ import annotations

import time
from collections.abc import Callable

WIDTH = 30


class ProgressBar:
    def __init__(
        self, *, total: int, write: Callable[[str], None], interactive: bool, label: str
    ) -> None:
        self.total = max(total, 0)
        self.write = write
        self.label = label
        self.done = 0
        self.started = time.monotonic()
        self.drawn_at = 0.0
        self.tenths_written = -1
        self.interactive = interactive

    def advance(self, count: int) -> None:
        self.done = min(self.done + count, self.total) if self.total else self.done + count
        now = time.monotonic()
        if self.interactive and now - self.drawn_at >= 0.1:
            self.drawn_at = now
            self.write("\r" + self.line())
        elif not self.interactive:
            tenths = self.done * 10 // self.total if self.total else 0
            if tenths > self.tenths_written:
                self.tenths_written = tenths
                self.write(self.line() + "\n")

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        share = self.done / self.total if self.total else 1.0
        filled = round(WIDTH * share)
        left = (self.total - self.done) / rate if rate and self.total else 0.0
        return (
            f"{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} "
            f"{share:4.0%} {rate:6.1f}/s, {left:4.0f} s left"
        )

    def close(self) -> None:
        if self.interactive:
            self.write("\r" + self.line() + "\n")
        elif self.tenths_written < 10:
            self.write(self.line() + "\n")
