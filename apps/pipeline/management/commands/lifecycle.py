from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.namespaces.models import Namespace
from apps.pipeline.lifecycle import SWEEPS, lifecycle_sweep_all


class Command(BaseCommand):
    help = (
        "Run the lifecycle sweeps (expire, cap, summarize) now, or preview them with --dry-run; "
        "prints one JSON report per namespace and sweep."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="show what would change")
        parser.add_argument("--namespace", help="one namespace (slug) instead of all")
        parser.add_argument("--job", action="append", choices=sorted(SWEEPS), dest="jobs")

    def handle(
        self,
        *args: Any,
        dry_run: bool,
        namespace: str | None,
        jobs: list[str] | None,
        **options: Any,
    ) -> None:
        found = None
        if namespace is not None:
            found = Namespace.objects.filter(slug=namespace).first()
            if found is None:
                raise CommandError(f"No such namespace: {namespace}")
        reports = lifecycle_sweep_all(
            actor=Actor.system("manage.py lifecycle"), dry_run=dry_run, jobs=jobs, namespace=found
        )
        for report in reports:
            self.stdout.write(json.dumps(report.as_dict()))
