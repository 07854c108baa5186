"""The cost and the gain of the multilingual model, against the primary model alone (the
earlier default), measured in the same process through `manage.py recall_eval`: ingest
(turns/s, write path with both models) and recall latency (p50/p95), alternated over rounds,
and recall quality by language case.

    .venv/bin/python bench/multilingual_bench.py [--rounds 2] [--locomo ../shared/data/locomo-dev]

Sets: the bilingual tuning set (tests/evaluation/data/bilingual-dev) and the bilingual holdout
set; LoCoMo dev (English) when its directory is given and present.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from apps.memories.multilingual import (  # noqa: E402
    UniversalSentenceEncoderProvider,
    set_multilingual_provider,
)
from bench.machine import cpu  # noqa: E402

DATA = ROOT / "tests" / "evaluation" / "data"
SPEED = ("ingest_per_s", "recall_p50_ms", "recall_p95_ms")


def evaluate(path: Path) -> dict[str, object]:
    out = io.StringIO()
    call_command("recall_eval", str(path), "--json", stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--locomo", type=Path, default=ROOT.parent / "shared/data/locomo-dev")
    options = parser.parse_args()
    print(f"CPU: {cpu()}")
    multilingual = UniversalSentenceEncoderProvider()
    sets = {
        "bilingual-dev": DATA / "bilingual-dev",
        "bilingual-holdout": DATA / "bilingual-holdout",
    }
    if options.locomo.is_dir():
        sets["locomo-dev"] = options.locomo
    else:
        print(f"LoCoMo dev not found at {options.locomo}: English figures left out.")
    variants = {"primary alone": None, "primary + multilingual": multilingual}
    for name, path in sets.items():
        runs: dict[str, list[dict[str, object]]] = {variant: [] for variant in variants}
        rounds = 1 if name == "locomo-dev" else options.rounds
        for _ in range(rounds):
            for variant, provider in variants.items():
                set_multilingual_provider(provider)
                runs[variant].append(evaluate(path))
        print(f"\n{name} ({runs['primary alone'][0]['questions']} questions, {rounds} rounds)")
        print(f"{'':<24}{'r@5':>7}{'r@10':>7}{'mrr':>7}{'ingest/s':>10}{'p50 ms':>8}{'p95 ms':>8}")
        medians = {}
        for variant, results in runs.items():
            first = results[0]
            speed = {key: statistics.median(float(r[key]) for r in results) for key in SPEED}
            medians[variant] = speed
            print(
                f"{variant:<24}{first['recall@5']:>7.3f}{first['recall@10']:>7.3f}"
                f"{first['mrr']:>7.3f}{speed['ingest_per_s']:>10.1f}"
                f"{speed['recall_p50_ms']:>8.1f}{speed['recall_p95_ms']:>8.1f}"
            )
        base, new = medians["primary alone"], medians["primary + multilingual"]
        ingest = new["ingest_per_s"] / base["ingest_per_s"]
        print(
            f"{'ratio (new / alone)':<24}{'':>21}{ingest:>10.2f}"
            f"{new['recall_p50_ms'] / base['recall_p50_ms']:>8.2f}"
            f"{new['recall_p95_ms'] / base['recall_p95_ms']:>8.2f}"
        )
        if name != "locomo-dev":
            print("by language, recall@10 / mrr:")
            for variant, results in runs.items():
                languages = results[0]["languages"]
                cells = "  ".join(
                    f"{case} {figures['recall@10']:.3f}/{figures['mrr']:.3f}"
                    for case, figures in sorted(languages.items())  # type: ignore[attr-defined]
                )
                print(f"  {variant:<24}{cells}")
    set_multilingual_provider(None, built=False)


if __name__ == "__main__":
    main()
