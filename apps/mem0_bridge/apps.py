from django.apps import AppConfig


class Mem0BridgeConfig(AppConfig):
    """The way in from Mem0: its data imported (`manage.py import_mem0`) and its client's
    API answered under /mem0/ by the same services as MemoryHub's own API."""

    name = "apps.mem0_bridge"
    label = "mem0_bridge"
    default_auto_field = "django.db.models.BigAutoField"
