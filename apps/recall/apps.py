from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "apps.recall"
    label = "recall"

    def ready(self) -> None:
        from apps.memories.services import subject_export_part_register
        from apps.recall.selectors import subject_recalls_export

        subject_export_part_register(name="recalls", part=subject_recalls_export)
