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
validated, which only reads. Swapping the primary key onto the built index is quick.

Migrations call these: what they emit must not change once a migration uses it. Django
knows none of these keys: its models name `id` as the primary key, so grouping by it alone
is not allowed on these tables (memoryhub/postgres_backend asks `keyed_by_namespace`).
"""

from __future__ import annotations

from django.db import migrations
from django.db.models import Model

NAMESPACE = "namespace_id"


def keyed_by_namespace(model: type[Model]) -> bool:
    """Whether the model's table has a primary key of (id, namespace_id), or (id, chain) for
    audit events (which have a namespace_id column as well): every table with the column."""
    return any(field.column == NAMESPACE for field in model._meta.concrete_fields)


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


def foreign_key(table: str, column: str, target: str, key: str = NAMESPACE) -> migrations.RunSQL:
    """(column, key) -> target (id, key), deferred like Django's own, not yet validated."""
    name = _foreign_key(table, column, key)
    return migrations.RunSQL(
        f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({column}, {key}) "
        f"REFERENCES {target} (id, {key}) DEFERRABLE INITIALLY DEFERRED NOT VALID",
        f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {name}",
    )


def validate(table: str, column: str, key: str = NAMESPACE) -> migrations.RunSQL:
    return migrations.RunSQL(
        f"ALTER TABLE {table} VALIDATE CONSTRAINT {_foreign_key(table, column, key)}",
        migrations.RunSQL.noop,
    )


def primary_key(table: str, column: str = NAMESPACE) -> migrations.RunSQL:
    """The primary key moves onto the index of `key_index`. No single-column foreign key may
    point at the table any more. Undone, it drops the foreign keys pointing at it as well."""
    return migrations.RunSQL(
        f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, "
        f"ADD CONSTRAINT {table}_pkey PRIMARY KEY USING INDEX {_index(table, column)}",
        f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey CASCADE, "
        f"ADD CONSTRAINT {table}_pkey PRIMARY KEY (id)",
    )


def unique(table: str, name: str, columns: tuple[str, ...]) -> list[migrations.RunSQL]:
    """A unique constraint built concurrently (for SeparateDatabaseAndState, beside the
    AddConstraint that tells Django of it)."""
    return [
        migrations.RunSQL(
            f"CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} "
            f"({', '.join(columns)})",
            f"DROP INDEX CONCURRENTLY IF EXISTS {name}",
        ),
        migrations.RunSQL(
            f"ALTER TABLE {table} ADD CONSTRAINT {name} UNIQUE USING INDEX {name}",
            f"ALTER TABLE {table} DROP CONSTRAINT {name}",
        ),
    ]
