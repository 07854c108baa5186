from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.memories.services.validity import history_relink
from apps.namespaces.models import Namespace


class Command(BaseCommand):
    help = (
        "End, with each ended fact of a namespace, the turns that stated it (docs/recall.md, "
        "'What is served is current'), and print how many turns ended."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--namespace", required=True)

    def handle(self, *args: Any, namespace: str, **options: Any) -> None:
        found = Namespace.objects.filter(slug=namespace).first()
        if found is None:
            raise CommandError(f"No such namespace: {namespace}")
        ended = history_relink(actor=Actor.system("manage.py relink_history"), namespace=found)
        self.stdout.write(f"{ended} turns ended with their facts in {namespace}.")
