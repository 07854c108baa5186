from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.namespaces.services import namespace_create
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = "Create a namespace (with its shared data key)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--description", default="")

    def handle(self, *args: Any, slug: str, name: str, description: str, **options: Any) -> None:
        try:
            namespace = namespace_create(
                actor=Actor.system("manage.py create_namespace"),
                slug=slug,
                name=name,
                description=description,
            )
        except ApplicationError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"Created namespace {namespace.slug}.")
