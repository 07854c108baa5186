from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The admins' pages, the top of the layers: it reads and writes through the domain
    apps' selectors and services, and none of them imports it."""

    name = "apps.dashboard"
    label = "dashboard"
