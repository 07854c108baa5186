import sys

from django.apps import AppConfig
from django.conf import settings


class MemoriesConfig(AppConfig):
    name = "apps.memories"
    label = "memories"

    def ready(self) -> None:
        # Recall's embedding worker gets the GIL back sooner (settings explain the figure).
        sys.setswitchinterval(settings.MEMORYHUB_GIL_SWITCH_INTERVAL)
