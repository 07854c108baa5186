"""The database scanner of the at-rest tests: where, in any column of any table, a string is.

One scanner for every test that must show a secret (a canary, a raw key) is nowhere, or that
it is where it should be: text, JSON and array columns are searched as text, binary ones for
the string's UTF-8 bytes.
"""

from __future__ import annotations

from django.db import connection

# information_schema.columns data_type values that can hold text or bytes.
SCANNED_TYPES = {"text", "character varying", "character", "json", "jsonb", "bytea", "ARRAY"}


def scanned_columns() -> list[tuple[str, str, str]]:
    """(table, column, data_type) of every text/json/bytea/array column of every public table."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.table_name, c.column_name, c.data_type
            FROM information_schema.columns c
            JOIN information_schema.tables t
              ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
            ORDER BY c.table_name, c.column_name
            """
        )
        return [row for row in cursor.fetchall() if row[2] in SCANNED_TYPES]


def columns_containing(needle: str) -> list[str]:
    """'table.column (n rows)' for every scanned column in which `needle` occurs."""
    quote = connection.ops.quote_name
    found = []
    with connection.cursor() as cursor:
        for table, column, data_type in scanned_columns():
            if data_type == "bytea":
                condition = f"position(%s::bytea in {quote(column)}) > 0"
                param: object = needle.encode("utf-8")
            else:
                condition = f"strpos({quote(column)}::text, %s) > 0"
                param = needle
            # Identifiers come from information_schema and are quoted; the needle is a parameter.
            query = f"SELECT count(*) FROM {quote(table)} WHERE {condition}"  # noqa: S608
            cursor.execute(query, [param])
            (count,) = cursor.fetchone()
            if count:
                found.append(f"{table}.{column} ({count} rows)")
    return found
