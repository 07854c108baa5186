"""What the bench scripts share about the machine and their process; no Django here, so the
load test's orchestrator (bench/loadtest/run.py) can use it too.

- `cpu()`: the CPU's model name, cores and the flags that decide embedding speed, printed
  beside every figure (the same figures differ several-fold between CPUs).
- `terminate_as_exit()`: SIGTERM raises SystemExit, so the scripts' cleanup runs.
"""

from __future__ import annotations

import os
import platform
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16")


def cpu() -> str:
    name, flags = platform.processor() or "unknown CPU", set[str]()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                name = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    present = [flag for flag in FLAGS if flag in flags]
    absent = [flag for flag in FLAGS if flag not in flags]
    return f"{name}, {os.cpu_count()} cores; flags: {', '.join(present) or 'none'}" + (
        f" (no {', '.join(absent)})" if absent else ""
    )


@contextmanager
def terminate_as_exit() -> Iterator[None]:
    """SIGTERM raises SystemExit, so the finally blocks (cleanup) run."""

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(f"terminated by signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
