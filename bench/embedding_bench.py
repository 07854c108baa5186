"""The embedding model's speed on this CPU, each runtime against plain sentence-transformers
(float32, batch 32) measured in the same process.

    .venv/bin/python bench/embedding_bench.py [--texts 512] [--queries 200] [--rounds 3]

Batches: sentences/s of plain sentence-transformers (the baseline), then of MemoryHub's
provider with float32 ONNX Runtime, bfloat16 torch (where the CPU computes bfloat16) and the
int8-quantised ONNX graph (`MEMORYHUB_EMBEDDING_QUANTIZE=int8`), alternated over rounds
(medians). Single queries: p50/p95 of `embed_query` for float32 and int8 ONNX. Prints the
CPU (model name and the flags that matter) beside the figures, and the int8 vectors'
cosine to the float32 ones. The texts are LoCoMo-like chat turns, generated.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from apps.memories.embeddings import (
    SentenceTransformerProvider,
    cpu_has_bf16,
    normalise,
)
from bench.machine import cpu

WORDS = [
    *("camping", "kids", "lake", "pottery", "painting", "adoption", "agency", "support"),
    *("group", "parade", "counseling", "school", "speech", "dinosaurs", "museum", "beach"),
    *("guitar", "concert", "yoga", "volunteering", "shelter", "bakery", "Sweden"),
    *("necklace", "grandma", "mentoring", "marathon", "running", "books", "garden", "hiking"),
]


def turns(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    speakers = ("Melanie", "Caroline", "Jon", "Gina")
    return [
        f"{rng.choice(speakers)}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 40)))
        for _ in range(count)
    ]


def rate(encode: Callable[[list[str]], object], texts: list[str]) -> float:
    started = time.perf_counter()
    encode(texts)
    return len(texts) / (time.perf_counter() - started)


def latencies(embed: Callable[[str], object], queries: list[str]) -> tuple[float, float]:
    for text in queries[:5]:
        embed(text)
    times = []
    for text in queries:
        started = time.perf_counter()
        embed(text)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.95)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"CPU: {cpu()}")
    texts = turns(args.texts)
    queries = [
        f"What did {t.split(':')[0]} say about {t.split()[2]}?" for t in turns(args.queries, 9)
    ]

    float32 = SentenceTransformerProvider(dtype="float32")
    int8 = SentenceTransformerProvider(dtype="float32", quantize="int8")
    plain = float32._load()  # the same weights, encoded by sentence-transformers itself
    int8._load()
    providers: dict[str, Callable[[list[str]], object]] = {
        "sentence-transformers float32 (baseline)": lambda batch: plain.encode(
            batch, batch_size=32, show_progress_bar=False
        ),
        f"provider, {float32.batch_runtime}": float32.embed_documents,
        f"provider, {int8.batch_runtime}": int8.embed_documents,
    }
    if cpu_has_bf16():
        bfloat16 = SentenceTransformerProvider(dtype="bfloat16")
        bfloat16._load()
        providers[f"provider, {bfloat16.batch_runtime}"] = bfloat16.embed_documents
    for encode in providers.values():
        encode(texts[:64])  # warm
    rates: dict[str, list[float]] = {name: [] for name in providers}
    for _ in range(args.rounds):
        for name, encode in providers.items():
            rates[name].append(rate(encode, texts))
    baseline = statistics.median(rates["sentence-transformers float32 (baseline)"])
    print(f"\nbatches of {args.texts} chat turns, batch 32, median of {args.rounds} rounds")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"  {name:<42} {median:7.1f} sentences/s  x{median / baseline:.2f}")

    print(f"\nsingle queries ({args.queries}), one thread")
    f50, f95 = latencies(float32.embed_query, queries)
    q50, q95 = latencies(int8.embed_query, queries)
    print(f"  {float32.query_runtime:<24} p50 {f50:6.2f} ms  p95 {f95:6.2f} ms")
    print(
        f"  {int8.query_runtime:<24} p50 {q50:6.2f} ms  p95 {q95:6.2f} ms  (x{f50 / q50:.2f} p50)"
    )

    a, b = normalise(float32.embed_documents(texts)), normalise(int8.embed_documents(texts))
    cosine = (a * b).sum(axis=1)
    print(f"\nint8 vs float32 vectors: cosine mean {cosine.mean():.4f}, min {cosine.min():.4f}")


if __name__ == "__main__":
    main()
