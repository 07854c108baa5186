from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.memories.embeddings import get_provider
from apps.memories.services import memories_reembed
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = (
        "Embed memories whose vector is missing or from another model (after changing "
        "MEMORYHUB_EMBEDDING_*). Resumable: run it again after an interruption."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--limit", type=int, default=None, help="stop after this many")

    def handle(self, *args: Any, batch_size: int, limit: int | None, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        try:
            count = memories_reembed(
                actor=Actor.system("manage.py reembed"), batch_size=batch_size, limit=limit
            )
        except ApplicationError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"Embedded {count} memories with {get_provider().name}.")
