from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.memories.selectors import subject_get
from apps.memories.services import subject_erase
from apps.namespaces.models import Namespace
from memoryhub.exceptions import NotFound


class Command(BaseCommand):
    help = "Erase a subject (crypto-shred its key, delete its data) and print the receipt."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("external_id")
        parser.add_argument("--namespace", required=True)

    def handle(self, *args: Any, external_id: str, namespace: str, **options: Any) -> None:
        found = Namespace.objects.filter(slug=namespace).first()
        if found is None:
            raise CommandError(f"No such namespace: {namespace}")
        try:
            subject = subject_get(namespace=found, external_id=external_id)
        except NotFound:
            raise CommandError("No such subject in that namespace.") from None
        receipt = subject_erase(
            actor=Actor.system("manage.py erase_subject"), subject=subject, via="command"
        )
        self.stdout.write(json.dumps(receipt.as_dict(), indent=2))
