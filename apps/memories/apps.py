import sys

from django.apps import AppConfig
from django.conf import settings


class MemoriesConfig(AppConfig):
    name = "apps.memories"
    label = "memories"

    def ready(self) -> None:
        from apps.memories.model_loading import embedding_readiness, warm_up_embedding_models
        from apps.tokens.tokenizers import warm_up_tokenizers
        from memoryhub.health import register_readiness_check
        from memoryhub.warm_up import register_warm_up

        # Recall's embedding worker gets the GIL back sooner (settings explain the figure).
        sys.setswitchinterval(settings.MEMORYHUB_GIL_SWITCH_INTERVAL)
        # /readyz: not ready until this process's embedding models are loaded.
        register_readiness_check("embeddings", embedding_readiness)
        # Loaded and run before a server's first request (memoryhub/warm_up.py).
        register_warm_up("embedding models", warm_up_embedding_models)
        register_warm_up("token counters", warm_up_tokenizers)
