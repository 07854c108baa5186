from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from apps.audit.actors import Actor
from apps.memories.row_encryption import key_provider
from apps.memories.services import data_keys_rotate


class Command(BaseCommand):
    help = "Re-wrap every data key under the newest KEK in MEMORYHUB_KEK (online, no downtime)."

    def handle(self, *args: Any, **options: Any) -> None:
        count = data_keys_rotate(actor=Actor.system("manage.py rotate_keys"))
        version = key_provider().current_version
        self.stdout.write(
            f"Re-wrapped {count} data keys; all keys are now under KEK version {version}. "
            "Older KEK versions can be removed from MEMORYHUB_KEK."
        )
