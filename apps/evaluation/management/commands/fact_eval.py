"""Measure whether questions find the right stored fact at rank 1, by language case, on
fact sets (apps/evaluation/fact_sets.py): each set's facts stored as a subject's memories in
a temporary namespace (deleted after), each question asked through recall.

python manage.py fact_eval tests/evaluation/data/bilingual-facts-dev [--json]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.evaluation import fact_sets


class Command(BaseCommand):
    help = "Hit@1, hit@3 and MRR by language case on fact sets (a temporary namespace)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="end with one JSON line"
        )

    def handle(self, *args: Any, paths: list[Path], as_json: bool, **options: Any) -> None:
        found = fact_sets.files(paths)
        if not found:
            raise CommandError(f"No fact sets found at: {', '.join(map(str, paths))}")
        try:
            sets = [fact_sets.read(path) for path in found]
        except fact_sets.FactSetError as error:
            raise CommandError(str(error)) from None
        table = fact_sets.summarize(fact_sets.evaluate(sets))
        self.stdout.write(f"{'language':<10}{'questions':>10}{'hit@1':>8}{'hit@3':>8}{'mrr':>8}")
        for language, row in table.items():
            self.stdout.write(
                f"{language:<10}{row['questions']:>10}{row['hit@1']:>8.3f}"
                f"{row['hit@3']:>8.3f}{row['mrr']:>8.3f}"
            )
        if as_json:
            self.stdout.write(json.dumps(table, sort_keys=True))
