from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from apps.recall.subject_indexes import refresh


class Command(BaseCommand):
    help = (
        "Create the partial HNSW index of every large subject and drop those no longer needed "
        "(see apps/memories/subject_indexes.py), or preview it with --dry-run; prints JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="show what would change")

    def handle(self, *args: Any, dry_run: bool, **options: Any) -> None:
        self.stdout.write(json.dumps(asdict(refresh(dry_run=dry_run))))
