"""Break-glass: a single-use dashboard sign-in link for USER, valid 10 minutes (for when the
identity provider is away, or password sign-in is off). Issuing it is audited."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from apps.accounts.login_links import login_link_issue
from apps.audit.actors import Actor


class Command(BaseCommand):
    help = (
        "Print a single-use sign-in link for USER, valid "
        f"{settings.MEMORYHUB_LOGIN_LINK_MINUTES} minutes; the link is printed alone on the "
        "last line. The base address is MEMORYHUB_PUBLIC_URL, or --base-url."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--base-url",
            default=settings.MEMORYHUB_PUBLIC_URL or "http://127.0.0.1:8000",
            help="the dashboard's address (default: MEMORYHUB_PUBLIC_URL, else the local one)",
        )

    def handle(self, *args: Any, username: str, base_url: str, **options: Any) -> None:
        user = User.objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"No active user {username!r}.")
        token = login_link_issue(actor=Actor.system("manage.py login_link"), user=user)
        path = reverse("dashboard:account:login_link", kwargs={"token": token})
        minutes = settings.MEMORYHUB_LOGIN_LINK_MINUTES
        self.stderr.write(f"A sign-in link for {username}: it works once, for {minutes} minutes.")
        self.stdout.write(f"{base_url.rstrip('/')}{path}")
