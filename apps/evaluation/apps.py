from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "apps.evaluation"
    label = "evaluation"

    def ready(self) -> None:
        from apps.evaluation.selectors import subject_eval_cases_export
        from apps.memories.services import subject_export_part_register

        subject_export_part_register(name="eval_cases", part=subject_eval_cases_export)
