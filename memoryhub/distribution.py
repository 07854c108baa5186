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

Each step can be run again: a migration stopped part way (these are not atomic) is finished
by running `migrate` again, which skips what is done and builds again an index a stopped
concurrent build left invalid. Migrations call these: what they do must not change once a
migration uses them. A new ForeignKey to a namespace's model says `db_constraint=False` (its
single-column constraint would need a key on the target's id alone) and gets its key from
`foreign_key`. Django knows none of these keys: its models name `id` as the primary key, so
grouping by it alone is not allowed on these tables (memoryhub/postgres_backend asks
`keyed_by_namespace`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from textwrap import dedent
from typing import Any

from django.db import OperationalError, migrations, router, transaction
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
    # Printing the SQL (sqlmigrate) runs nothing; a failed statement would end the
    # migration's transaction.
    if schema_editor.collect_sql or connection.in_atomic_block:
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


class UniqueIndex(Operation):
    """A unique index built concurrently, which a migration interrupted part way can build
    again: an invalid index left by a build that stopped is dropped first, and none is built
    once the table's primary key is on `columns` (key_index's, moved there by primary_key)."""

    def __init__(self, table: str, name: str, columns: tuple[str, ...]) -> None:
        self.table = table
        self.name = name
        self.columns = tuple(columns)

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return (self.__class__.__qualname__, [self.table, self.name, self.columns], {})

    def describe(self) -> str:
        return f"Unique index {self.name} built concurrently"

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        create = (
            f"CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS {self.name} ON {self.table} "
            f"({', '.join(self.columns)})"
        )
        if not router.allow_migrate(schema_editor.connection.alias, app_label):
            return
        if schema_editor.collect_sql:
            schema_editor.execute(create)
            return
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(_PRIMARY_KEY, [self.table])
            if tuple(cursor.fetchone()[0] or ()) == self.columns:
                return
            cursor.execute(
                "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", [self.name]
            )
            left = cursor.fetchone()
            if left is not None and not left[0]:
                cursor.execute(f"DROP INDEX CONCURRENTLY {self.name}")
            cursor.execute(create)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if router.allow_migrate(schema_editor.connection.alias, app_label):
            schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {self.name}")


# The columns of a table's primary key, in order (NULL if it has none).
_PRIMARY_KEY = """
    SELECT ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, n)
                 JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
                 ORDER BY k.n)
    FROM pg_class t LEFT JOIN pg_constraint con ON con.conrelid = t.oid AND con.contype = 'p'
    WHERE t.oid = to_regclass(%s)
"""


def _unless_constraint(table: str, name: str, statement: str) -> str:
    """`statement`, unless `table` has the constraint `name` already. Names here are the
    migrations' own, never input."""
    exists = (
        f"SELECT 1 FROM pg_constraint WHERE conname = '{name}' "  # noqa: S608
        f"AND conrelid = '{table}'::regclass"
    )
    return f"DO $$ BEGIN IF NOT EXISTS ({exists}) THEN {statement}; END IF; END $$"


def _index(table: str, column: str) -> str:
    return f"{table}_id_{column}_key"


def _foreign_key(table: str, column: str, key: str) -> str:
    return f"{table}_{column}_{key}_fk"


def key_index(table: str, column: str = NAMESPACE) -> UniqueIndex:
    """The unique index (id, column) the primary key and foreign keys will use."""
    return UniqueIndex(table, _index(table, column), ("id", column))


def foreign_key(table: str, column: str, target: str, key: str = NAMESPACE) -> Retried:
    """(column, key) -> target (id, key), deferred like Django's own, not yet validated."""
    name = _foreign_key(table, column, key)
    return Retried(
        migrations.RunSQL(
            _unless_constraint(
                table,
                name,
                f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({column}, {key}) "
                f"REFERENCES {target} (id, {key}) DEFERRABLE INITIALLY DEFERRED NOT VALID",
            ),
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
    """The primary key moves onto the index of `key_index` (unless it has already: the index
    is gone then). No single-column foreign key may point at the table any more. Undone, the
    primary key is (id) again beside a unique index (id, column), and the foreign keys that
    pointed at the primary key point at that index."""
    index = _index(table, column)
    return Retried(
        migrations.RunSQL(
            f"DO $$ BEGIN IF to_regclass('{index}') IS NOT NULL THEN "
            f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, "
            f"ADD CONSTRAINT {table}_pkey PRIMARY KEY USING INDEX {index}; END IF; END $$",
            dedent(f"""\
            DO $$
            DECLARE
                pointing text[];
                statement text;
            BEGIN
                IF to_regclass('{index}') IS NOT NULL THEN RETURN; END IF;
                pointing := ARRAY(
                    SELECT format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass,
                                  conname, pg_get_constraintdef(oid))
                    FROM pg_constraint WHERE contype = 'f' AND confrelid = '{table}'::regclass);
                ALTER TABLE {table} DROP CONSTRAINT {table}_pkey CASCADE;
                ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (id);
                CREATE UNIQUE INDEX {index} ON {table} (id, {column});
                FOREACH statement IN ARRAY pointing LOOP EXECUTE statement; END LOOP;
            END $$"""),  # noqa: S608
        )
    )


def unique(table: str, name: str, columns: tuple[str, ...]) -> list[Operation]:
    """A unique constraint built concurrently (for SeparateDatabaseAndState, beside the
    AddConstraint that tells Django of it)."""
    return [
        UniqueIndex(table, name, columns),
        Retried(
            migrations.RunSQL(
                _unless_constraint(
                    table,
                    name,
                    f"ALTER TABLE {table} ADD CONSTRAINT {name} UNIQUE USING INDEX {name}",
                ),
                f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {name}",
            )
        ),
    ]
