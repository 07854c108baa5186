from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "apps.recall"
    label = "recall"

    def ready(self) -> None:
        from apps.memories.services import subject_export_part_register
        from apps.recall.search import warm_up_query_thread
        from apps.recall.selectors import subject_recalls_export
        from memoryhub.warm_up import register_warm_up

        subject_export_part_register(name="recalls", part=subject_recalls_export)
        # After the models are loaded (apps.memories registers them first).
        register_warm_up("recall's query thread", warm_up_query_thread)
