"""Compare the extractors (rules, LLM, both) on a knowledge-update set, the ordinary-sentence
corpus and a LoCoMo sample, and print one table.

python manage.py extractor_eval --sets heldout_m [--endpoint URL --model NAME] [--limit N]
    [--modes offline,llm,both] [--locomo-turns N] [--json]

Without --endpoint the server's MEMORYHUB_LLM_URL is used; without either, only the rules.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import cast

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.evaluation import locomo
from apps.evaluation.extractor_comparison import MODES, Figures, compare, read_sentences
from apps.evaluation.knowledge import read_scenarios

SETS = Path("tests/knowledge")
ORDINARY = Path("tests/facts/data/ordinary_sentences.txt")
LOCOMO = Path("../shared/data/locomo-dev")


class Command(BaseCommand):
    help = "Compare the rules, the LLM and both on data no rule was tuned on."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sets", nargs="+", default=["heldout_m"])
        parser.add_argument("--endpoint", help="an OpenAI-compatible base URL")
        parser.add_argument("--model", help="the endpoint's model name")
        parser.add_argument("--modes", default=",".join(MODES))
        parser.add_argument("--limit", type=int, help="at most N scenarios and N sentences")
        parser.add_argument("--locomo-turns", type=int, default=200)
        parser.add_argument(
            "--timeout", type=float, default=300.0, help="seconds an LLM call may take"
        )
        parser.add_argument("--json", action="store_true", help="end with one JSON line")

    def handle(self, *args: object, **options: object) -> None:
        modes = tuple(str(options["modes"]).split(","))
        if not set(modes) <= set(MODES):
            raise CommandError(f"--modes takes {', '.join(MODES)}.")
        if options["endpoint"]:
            settings.MEMORYHUB_LLM_URL = str(options["endpoint"]).rstrip("/")
        if options["model"]:
            settings.MEMORYHUB_LLM_MODEL = str(options["model"])
        # The model is measured, not the endpoint's availability: a slow call is waited for,
        # and the breaker does not open (jobs the rules took over are still counted).
        settings.MEMORYHUB_LLM_TIMEOUT = cast(float, options["timeout"])
        settings.MEMORYHUB_LLM_BREAKER_FAILURES = 1_000_000
        if not settings.MEMORYHUB_LLM_URL and set(modes) - {"offline"}:
            self.stderr.write("No LLM endpoint (--endpoint or MEMORYHUB_LLM_URL): rules only.")
            modes = ("offline",)
        limit = options["limit"]
        scenarios = []
        for name in cast(list[str], options["sets"]):
            path = SETS / f"{name}.json"
            if not path.is_file():
                raise CommandError(f"{path} is not a set of scenarios.")
            scenarios += read_scenarios(path)
        sentences = read_sentences(ORDINARY)
        if isinstance(limit, int):
            scenarios, sentences = scenarios[:limit], sentences[:limit]
        conversations = []
        if LOCOMO.is_dir():
            files = sorted(locomo.conversation_files([LOCOMO]))
            conversations = [locomo.read_conversation(path) for path in files]
        else:
            self.stderr.write(f"{LOCOMO} is not here: no LoCoMo sample.")
        results = compare(
            modes=modes,
            scenarios=scenarios,
            sentences=sentences,
            conversations=conversations,
            locomo_turns=cast(int, options["locomo_turns"]),
        )
        self._table(results, str(settings.MEMORYHUB_LLM_MODEL or ""))
        if options["json"]:
            self.stdout.write(json.dumps([asdict(f) for f in results], ensure_ascii=False))

    def _table(self, results: list[Figures], model: str) -> None:
        names = {"offline": "rules", "llm": f"llm ({model})", "both": f"both ({model})"}
        rows: list[tuple[str, Callable[[Figures], str]]] = [
            ("scenarios fully right", lambda f: f"{f.right}/{f.scenarios}"),
            ("corrected health facts left current", lambda f: str(f.health_left_current)),
            (
                "facts invented from ordinary sentences",
                lambda f: f"{len(f.invented)} in {f.sentences}",
            ),
            ("  of which the LLM's", lambda f: str(f.invented_by_llm)),
            ("LLM facts refused", lambda f: str(sum(f.refused.values()))),
            *[
                (f"  refused: {reason}", lambda f, r=reason: str(f.refused.get(r, 0)))
                for reason in sorted({r for f in results for r in f.refused})
            ],
            ("LLM calls per turn", lambda f: f"{f.calls / f.turns:.2f}" if f.turns else "-"),
            ("LLM calls failed / left to the rules", lambda f: f"{f.failures} / {f.fallbacks}"),
            (
                "p50 latency of a call",
                lambda f: f"{f.p50_seconds:.2f} s" if f.p50_seconds is not None else "-",
            ),
            ("LoCoMo facts kept per 100 turns", lambda f: (
                f"{100 * f.locomo_facts / f.locomo_turns:.1f}" if f.locomo_turns else "-"
            )),
            ("wall time", lambda f: f"{f.seconds:.0f} s"),
        ]  # fmt: skip
        width = max(len(label) for label, _ in rows)
        columns = [names[f.mode] for f in results]
        sizes = [max(len(c), 10) for c in columns]
        header = " | ".join(c.rjust(s) for c, s in zip(columns, sizes, strict=True))
        self.stdout.write(f"{'':<{width}} | {header}")
        for label, cell in rows:
            values = [cell(f).rjust(s) for f, s in zip(results, sizes, strict=True)]
            self.stdout.write(f"{label:<{width}} | {' | '.join(values)}")
        for figures in results:
            if figures.invented:
                self.stdout.write(f"{names[figures.mode]} invented: {figures.invented}")
