from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    """What the dashboard's memory pages stand on and the store does not hold: the overview's
    figures and their rollups, the explorer's filters and orders, review counts, word diffs
    of versions, policy previews, purge jobs, and the record that a person read decrypted
    content. Its pages are apps/dashboard's."""

    name = "apps.governance"
    label = "governance"
    default_auto_field = "django.db.models.BigAutoField"
