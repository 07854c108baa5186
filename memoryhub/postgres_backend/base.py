"""Django's PostgreSQL backend, knowing that a namespace's tables have (id, namespace_id) as
their primary key in the database while Django's models name `id` (memoryhub/distribution.py).

A query that groups a model's rows (`annotate(Count(...))`) may select the model's columns
while grouping by its primary key only, and Django then groups by `id` alone. PostgreSQL
allows that only for the table's whole primary key, so for those tables Django groups by
every column it selects instead.
"""

from __future__ import annotations

from django.db.backends.postgresql import base as postgresql
from django.db.backends.postgresql.features import DatabaseFeatures as PostgresFeatures
from django.db.models import Model

from memoryhub.distribution import keyed_by_namespace


class DatabaseFeatures(PostgresFeatures):
    def allows_group_by_selected_pks_on_model(self, model: type[Model]) -> bool:
        return super().allows_group_by_selected_pks_on_model(model) and not keyed_by_namespace(
            model
        )


class DatabaseWrapper(postgresql.DatabaseWrapper):
    features_class = DatabaseFeatures
