"""Walk the audit hash chain; exit non-zero naming the first broken link."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.audit.selectors import audit_chain_verify


class Command(BaseCommand):
    help = "Verify the audit log's hash chain and name the first broken link."

    def handle(self, *args: Any, **options: Any) -> None:
        checked, broken = audit_chain_verify()
        if broken is not None:
            raise CommandError(
                f"Audit chain broken at event {broken.event_id}: {broken.reason} "
                f"({checked} events before it are intact)."
            )
        self.stdout.write(self.style.SUCCESS(f"Audit chain intact: {checked} events verified."))
