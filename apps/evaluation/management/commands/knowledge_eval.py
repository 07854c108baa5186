"""Run the knowledge-update suite through the write pipeline and print the per-category table.

python manage.py knowledge_eval [tests/knowledge/scenarios.json] [--failures] [--json]
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.evaluation.knowledge import (
    ranked_scenario,
    read_scenarios,
    run_suite,
    summary_outcome,
    table,
)

DEFAULT = Path("tests/knowledge/scenarios.json")


class Command(BaseCommand):
    help = "Knowledge updates: do current facts stay true? (a scratch namespace, deleted after)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", type=Path, default=DEFAULT)
        parser.add_argument("--failures", action="store_true", help="list each failed scenario")
        parser.add_argument("--json", action="store_true", help="end with one JSON line")
        parser.add_argument(
            "--summaries", action="store_true", help="also judge the offline summary of each"
        )

    def handle(self, *args: object, **options: object) -> None:
        path = options["path"]
        assert isinstance(path, Path)
        if not path.is_file():
            raise CommandError(f"{path} is not a file of scenarios.")
        outcomes = run_suite(read_scenarios(path))
        self.stdout.write(f"{'category':<24} {'scenarios':>9} {'right':>6} {'share':>7}")
        for name, count, right in table(outcomes):
            self.stdout.write(f"{name:<24} {count:>9} {right:>6} {right / count:>7.1%}")
        critical = [o for o in outcomes if o.scenario.critical and not o.right]
        self.stdout.write(f"critical (allergy, medical) failures: {len(critical)}")
        asked = [o for o in outcomes if ranked_scenario(o.scenario)]
        misranked = [o for o in asked if o.misranked]
        self.stdout.write(
            f"current above stale (recall and portal search): {len(asked) - len(misranked)}"
            f"/{len(asked)} update scenarios"
        )
        if options["failures"]:
            for outcome in outcomes:
                if not outcome.right or outcome.misranked:
                    self.stdout.write(
                        f"- {outcome.scenario.id}: missing {outcome.missing}, stale {outcome.kept}"
                        f", misranked {outcome.misranked}\n    facts: {outcome.facts}"
                    )
        summaries = []
        if options["summaries"]:
            summaries = [summary_outcome(o.scenario) for o in outcomes]
            right = sum(s.outcome.right for s in summaries)
            shares = sorted(s.share for s in summaries)
            self.stdout.write(
                f"summaries: {right}/{len(summaries)} state every current fact and no stale one;"
                f" size vs the turns' tokens: median {shares[len(shares) // 2]:.0%},"
                f" max {shares[-1]:.0%}"
            )
            if options["failures"]:
                for item in summaries:
                    if not item.outcome.right:
                        self.stdout.write(
                            f"- summary of {item.outcome.scenario.id}: missing"
                            f" {item.outcome.missing}, stale {item.outcome.kept}\n"
                            f"    {item.summary}"
                        )
        if options["json"]:
            result = {
                "scenarios": len(outcomes),
                "right": sum(o.right for o in outcomes),
                "critical_failures": len(critical),
                "ranked": len(asked),
                "misranked": len(misranked),
            }
            if summaries:
                result["summaries_right"] = sum(s.outcome.right for s in summaries)
            self.stdout.write(json.dumps(result))
