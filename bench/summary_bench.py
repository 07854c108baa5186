"""The offline session summary on real conversations: its size against the session's turns,
and its time.

    .venv/bin/python bench/summary_bench.py [../shared/data/locomo-dev/] [--words 150]

Each LoCoMo session is summarised as MemoryHub summarises a session (the first speaker's
turns as the user's, the other's as the assistant's); printed per conversation: sessions,
the summary's tokens as a share of the session's tokens (median, p90, max; cl100k_base), and
milliseconds per summary. The knowledge-update suite judges what the summaries say
(`manage.py knowledge_eval --summaries`); this measures how much they compress.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from apps.evaluation.locomo import conversation_files, read_conversation  # noqa: E402
from apps.pipeline.extraction import OfflineSummarizer, Turn  # noqa: E402
from apps.tokens.tokenizers import count_tokens  # noqa: E402

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[DEFAULT])
    parser.add_argument("--words", type=int, default=150)
    args = parser.parse_args()
    files = list(conversation_files(args.paths))
    if not files:
        sys.exit(f"no LoCoMo files under {', '.join(map(str, args.paths))}")
    summarizer = OfflineSummarizer(words=args.words)
    print(f"CPU: {cpu_name()}; summary cap {args.words} words")
    print(f"{'conversation':<14} {'sessions':>8} {'median':>7} {'p90':>6} {'max':>6} {'ms':>6}")
    every: list[float] = []
    for path in files:
        conversation = read_conversation(path)
        sessions: dict[int, list[Turn]] = defaultdict(list)
        for turn in conversation.turns:
            role = "user" if turn.speaker == conversation.speakers[0] else "assistant"
            sessions[turn.session].append(Turn(role, turn.text, turn.position))
        shares, times = [], []
        for turns in sessions.values():
            started = time.perf_counter()
            summary = summarizer.summarize(turns)
            times.append((time.perf_counter() - started) * 1000)
            total = sum(count_tokens(t.content) for t in turns)
            shares.append(count_tokens(summary) / max(total, 1))
        every += shares
        shares.sort()
        print(
            f"{conversation.name:<14} {len(shares):>8} {statistics.median(shares):>7.0%}"
            f" {shares[int(0.9 * (len(shares) - 1))]:>6.0%} {shares[-1]:>6.0%}"
            f" {statistics.mean(times):>6.1f}"
        )
    every.sort()
    print(
        f"{'all':<14} {len(every):>8} {statistics.median(every):>7.0%}"
        f" {every[int(0.9 * (len(every) - 1))]:>6.0%} {every[-1]:>6.0%}"
    )


if __name__ == "__main__":
    main()
