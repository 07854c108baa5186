from django.apps import AppConfig


class NamespacesConfig(AppConfig):
    name = "apps.namespaces"
    label = "namespaces"
