from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.services import api_key_create
from apps.audit.actors import Actor
from apps.namespaces.models import Namespace
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = "Create an API key; the raw key is printed alone on the last line, once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--namespace", action="append", required=True, help="repeatable")
        parser.add_argument(
            "--permissions",
            required=True,
            help="comma-separated, e.g. memories:read,memories:write",
        )
        parser.add_argument("--name", default="")

    def handle(
        self, *args: Any, namespace: list[str], permissions: str, name: str, **options: Any
    ) -> None:
        found = list(Namespace.objects.filter(slug__in=namespace))
        missing = sorted(set(namespace) - {n.slug for n in found})
        if missing:
            raise CommandError(f"No such namespace: {', '.join(missing)}")
        try:
            api_key, raw = api_key_create(
                actor=Actor.system("manage.py create_api_key"),
                name=name or f"key for {', '.join(namespace)}",
                namespaces=found,
                permissions=[p.strip() for p in permissions.split(",") if p.strip()],
            )
        except ApplicationError as error:
            raise CommandError(f"{error.message} {error.details}") from None
        self.stderr.write(f"Created API key {api_key.prefix}. It is shown once; store it now.")
        self.stdout.write(raw)
