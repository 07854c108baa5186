"""The first-run demo namespace `demo`: load, remove, status, and its small eval set.

python manage.py demo load [--if-enabled]   # make run: --if-enabled, on first start only
python manage.py demo remove [--force]
python manage.py demo status
python manage.py demo eval [--k 5]
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.demo import services
from memoryhub.exceptions import ApplicationError

WHERE_TO_CLICK = (
    "Start with /n/demo/memories/ (the explorer), /n/demo/review/ (the review queue) and "
    "/playground/ (namespace demo, subject demo-user-1, session demo-user-1-s3)."
)


class Command(BaseCommand):
    help = "Load, remove or inspect the demo namespace `demo` (synthetic data)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        load = actions.add_parser("load", help="load the demo namespace unless it exists")
        load.add_argument(
            "--if-enabled",
            action="store_true",
            help="only on a first start with MEMORYHUB_DEMO on (what `make run` does): not when "
            "the demo was removed before, nor when the install has namespaces of its own",
        )
        remove = actions.add_parser("remove", help="delete the demo namespace (crypto-shredded)")
        remove.add_argument(
            "--force",
            action="store_true",
            help="remove a namespace `demo` even if it holds subjects the demo did not make",
        )
        actions.add_parser("status", help="say whether the demo is loaded, with its counts")
        evaluate = actions.add_parser("eval", help="run the demo's eval set against the demo")
        evaluate.add_argument("--k", type=int, default=5)

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            if action == "load":
                self._load(if_enabled=options["if_enabled"])
            elif action == "remove":
                report = services.demo_remove(actor=services.demo_actor(), force=options["force"])
                self._report(report, "Removed")
            elif action == "status":
                self._report(services.demo_status(), "Holds")
            else:
                self._eval(options["k"])
        except ApplicationError as error:
            raise CommandError(error.message) from None

    def _load(self, *, if_enabled: bool) -> None:
        if if_enabled:
            reason = services.first_start_skip_reason()
            if reason:
                self.stdout.write(f"Demo not loaded: {reason}.")
                return
        report = services.demo_load(actor=services.demo_actor())
        self._report(report, "Loaded")
        if report.done:
            self.stdout.write(WHERE_TO_CLICK)

    def _report(self, report: services.DemoReport, verb: str) -> None:
        style = self.style.SUCCESS if report.done else self.style.NOTICE
        timing = f" ({report.seconds:.1f} s)" if report.seconds else ""
        self.stdout.write(style(report.message + timing))
        if report.counts:
            self.stdout.write(f"{verb}:")
            for line in services.iter_counts(counts=report.counts):
                self.stdout.write(f"  {line}")
        if report.tokens:
            tokens = ", ".join(str(t) for t in report.tokens)
            self.stdout.write(f"  context assemblies' prompt tokens: {tokens}")

    def _eval(self, k: int) -> None:
        outcome = services.demo_eval(actor=services.demo_actor(), k=k)
        for row in outcome.rows:
            rank = f"rank {row.rank}" if row.rank else f"not in the top {k}"
            self.stdout.write(f"{row.subject}  {row.query}  -> {rank}")
        self.stdout.write(
            f"{len(outcome.rows)} queries: hit@{k} {outcome.hit_rate:.3f}, MRR {outcome.mrr:.3f}"
        )
