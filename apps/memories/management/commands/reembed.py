from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.memories import vector_spaces
from apps.memories.models import VectorFill
from apps.memories.services import memories_reembed
from apps.memories.tasks import reembed
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = (
        "Fill the vectors of the configured embedding models (after changing "
        "MEMORYHUB_EMBEDDING_* or MEMORYHUB_MULTILINGUAL_EMBEDDING, or on an install made "
        "before the multilingual model): new vectors go beside the old ones, and recall "
        "switches to them in one step when they are all in. Resumable: run it again after "
        "an interruption. --status prints where each column stands; --queue hands the work "
        "to a Celery worker."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--limit", type=int, default=None, help="stop after this many")
        parser.add_argument("--status", action="store_true", help="print progress and exit")
        parser.add_argument("--queue", action="store_true", help="run on a Celery worker")

    def handle(
        self,
        *args: Any,
        batch_size: int,
        limit: int | None,
        status: bool,
        queue: bool,
        **options: Any,
    ) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        if status:
            self.stdout.write(f"Recall compares vectors: {vector_spaces.serving().mode}")
            for fill in vector_spaces.fills():
                self.report(fill)
            return
        if queue:
            reembed.delay()
            self.stdout.write("Queued; follow it with --status or on the dashboard's overview.")
            return
        try:
            count = memories_reembed(
                actor=Actor.system("manage.py reembed"),
                batch_size=batch_size,
                limit=limit,
                progress=self.report,
            )
        except ApplicationError as error:
            raise CommandError(error.message) from None
        spaces = vector_spaces.serving()
        models = " and ".join(name for name in (spaces.primary, spaces.multilingual) if name)
        self.stdout.write(f"Embedded {count} vectors with {models}; recall: {spaces.mode}.")

    def report(self, fill: VectorFill) -> None:
        state = "complete" if fill.complete else f"{fill.done} of {fill.total} memories"
        self.stdout.write(f"{fill.column} ({fill.model}): {state}")
