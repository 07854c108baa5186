"""The statements a recall runs, with their values, and their plans as PostgreSQL makes
them for those values (the candidate statement binds its values server-side)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection

from apps.recall.statements import bound_cursor


@contextmanager
def recorded_statements() -> Iterator[list[tuple[str, Any]]]:
    """Every statement run inside, with its parameters, in order."""
    statements: list[tuple[str, Any]] = []

    def record(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield statements


def plan_of(sql: str, params: Any) -> str:
    """EXPLAIN of a statement with its values bound as the recall bound them."""
    with bound_cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())
