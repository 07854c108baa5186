import sys

from django.apps import AppConfig
from django.conf import settings


class MemoriesConfig(AppConfig):
    name = "apps.memories"
    label = "memories"

    def ready(self) -> None:
        from apps.memories.model_loading import embedding_readiness
        from memoryhub.health import register_readiness_check

        # Recall's embedding worker gets the GIL back sooner (settings explain the figure).
        sys.setswitchinterval(settings.MEMORYHUB_GIL_SWITCH_INTERVAL)
        # /readyz: not ready until this process's embedding models are loaded.
        register_readiness_check("embeddings", embedding_readiness)
