from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    """The dashboard's governance pages over a namespace's memories: the explorer, a
    memory's detail with its history, the review queue, bulk changes and purges, subjects."""

    name = "apps.governance"
    label = "governance"
    default_auto_field = "django.db.models.BigAutoField"
