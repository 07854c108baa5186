"""Migration operations that make a namespace's table ready to be distributed by namespace:
its primary key and its foreign keys to the namespace's other tables carry the distribution
column (tests/foundation/test_distribution.py says why, and checks every table).

- The primary key becomes (id, namespace_id). `id` leads, so every lookup by id still uses
  it, and ids stay unique on their own (random UUIDs, or a sequence's numbers).
- A foreign key becomes (column, namespace_id) referencing (id, namespace_id): a row and the
  row it points at are in the same namespace, which the database now checks as well.
  Django declares these ForeignKeys with `db_constraint=False` and still does the cascades.

Each is built without holding writes back on a large table: the unique index concurrently
(so a migration using these says `atomic = False`), the foreign keys NOT VALID and then
validated, which only reads. Swapping the primary key onto the built index is quick. The
steps that take a table's lock for a moment (adding or dropping a key, swapping the primary
key) wait at most LOCK_TIMEOUT for it, so that writes never queue long behind them, and are
tried again when they time out or the database cancels them to break a deadlock with the
app's writes (which take the same tables' locks in another order): `Retried`.

Migrations call these: what they emit must not change once a migration uses it. Django
knows none of these keys: its models name `id` as the primary key, so grouping by it alone
is not allowed on these tables (memoryhub/postgres_backend asks `keyed_by_namespace`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db import OperationalError, migrations, transaction
from django.db.migrations.operations.base import Operation
from django.db.models import Model
from psycopg import errors

NAMESPACE = "namespace_id"
LOCK_TIMEOUT = "2s"
ATTEMPTS = 30


def keyed_by_namespace(model: type[Model]) -> bool:
    """Whether the model's table has a primary key of (id, namespace_id), or (id, chain) for
    audit events (which have a namespace_id column as well): every table with the column."""
    return any(field.column == NAMESPACE for field in model._meta.concrete_fields)


class Retried(Operation):
    """`operation`, waiting at most LOCK_TIMEOUT for a lock, tried again (up to ATTEMPTS times)
    when it times out or is cancelled to break a deadlock. A key between two tables first
    locks the table it points at (`points_at`, or the ForeignKey's table for Django's
    AlterField), as the app's writes do (a subject, then its memory), so it waits for the
    writes instead of deadlocking with them. Each try is one transaction, in a migration that
    says `atomic = False`."""

    reversible = True

    def __init__(self, operation: Operation, points_at: str = "") -> None:
        self.operation = operation
        self.points_at = points_at

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return (self.__class__.__qualname__, [self.operation], {"points_at": self.points_at})

    def describe(self) -> str:
        return f"{self.operation.describe()}, retried"

    def state_forwards(self, app_label: str, state: Any) -> None:
        self.operation.state_forwards(app_label, state)

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        _retried(
            schema_editor,
            self._points_at(app_label, from_state),
            lambda: self.operation.database_forwards(
                app_label, schema_editor, from_state, to_state
            ),
        )

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        _retried(
            schema_editor,
            self._points_at(app_label, to_state),
            lambda: self.operation.database_backwards(
                app_label, schema_editor, from_state, to_state
            ),
        )

    def _points_at(self, app_label: str, state: Any) -> str:
        if self.points_at or not isinstance(self.operation, migrations.AlterField):
            return self.points_at
        model = state.apps.get_model(app_label, self.operation.model_name)
        related = model._meta.get_field(self.operation.name).related_model
        return related._meta.db_table if related is not None else ""


def _retried(schema_editor: Any, points_at: str, run: Callable[[], None]) -> None:
    connection = schema_editor.connection
    if connection.in_atomic_block:  # a failed statement would end the migration's transaction
        run()
        return
    with connection.cursor() as cursor:
        cursor.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
        try:
            for attempt in range(1, ATTEMPTS + 1):
                try:
                    with transaction.atomic(using=connection.alias):
                        if points_at:
                            cursor.execute(f"LOCK TABLE {points_at} IN SHARE ROW EXCLUSIVE MODE")
                        run()
                    return
                except OperationalError as error:
                    waited = isinstance(
                        error.__cause__, errors.LockNotAvailable | errors.DeadlockDetected
                    )
                    if not waited or attempt == ATTEMPTS:
                        raise
                time.sleep(0.05 * attempt)
        finally:
            cursor.execute("RESET lock_timeout")


def _index(table: str, column: str) -> str:
    return f"{table}_id_{column}_key"


def _foreign_key(table: str, column: str, key: str) -> str:
    return f"{table}_{column}_{key}_fk"


def key_index(table: str, column: str = NAMESPACE) -> migrations.RunSQL:
    """The unique index (id, column) the primary key and foreign keys will use."""
    name = _index(table, column)
    return migrations.RunSQL(
        f"CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} (id, {column})",
        f"DROP INDEX CONCURRENTLY IF EXISTS {name}",
    )


def foreign_key(table: str, column: str, target: str, key: str = NAMESPACE) -> Retried:
    """(column, key) -> target (id, key), deferred like Django's own, not yet validated."""
    name = _foreign_key(table, column, key)
    return Retried(
        migrations.RunSQL(
            f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({column}, {key}) "
            f"REFERENCES {target} (id, {key}) DEFERRABLE INITIALLY DEFERRED NOT VALID",
            f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {name}",
        ),
        points_at=target,
    )


def validate(table: str, column: str, key: str = NAMESPACE) -> migrations.RunSQL:
    return migrations.RunSQL(
        f"ALTER TABLE {table} VALIDATE CONSTRAINT {_foreign_key(table, column, key)}",
        migrations.RunSQL.noop,
    )


def primary_key(table: str, column: str = NAMESPACE) -> Retried:
    """The primary key moves onto the index of `key_index`. No single-column foreign key may
    point at the table any more. Undone, it drops the foreign keys pointing at it as well."""
    return Retried(
        migrations.RunSQL(
            f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, "
            f"ADD CONSTRAINT {table}_pkey PRIMARY KEY USING INDEX {_index(table, column)}",
            f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey CASCADE, "
            f"ADD CONSTRAINT {table}_pkey PRIMARY KEY (id)",
        )
    )


def unique(table: str, name: str, columns: tuple[str, ...]) -> list[Operation]:
    """A unique constraint built concurrently (for SeparateDatabaseAndState, beside the
    AddConstraint that tells Django of it)."""
    return [
        migrations.RunSQL(
            f"CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} "
            f"({', '.join(columns)})",
            f"DROP INDEX CONCURRENTLY IF EXISTS {name}",
        ),
        Retried(
            migrations.RunSQL(
                f"ALTER TABLE {table} ADD CONSTRAINT {name} UNIQUE USING INDEX {name}",
                f"ALTER TABLE {table} DROP CONSTRAINT {name}",
            )
        ),
    ]
