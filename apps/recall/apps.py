from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "apps.recall"
    label = "recall"
