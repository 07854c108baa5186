from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "apps.pipeline"
    label = "pipeline"

    def ready(self) -> None:
        from apps.memories.services import subject_export_part_register
        from apps.pipeline.selectors import subject_sessions_export

        subject_export_part_register(name="sessions", part=subject_sessions_export)
