"""Ready to distribute by namespace: every table of the schema is a namespace's, to be spread
over nodes by its namespace column (Citus's distribution column, or native hash
partitioning's key), or shared by every namespace (a reference table, copied whole to each
node). A node can enforce a distributed table's primary and unique keys, and its foreign keys
to other distributed tables, only if they carry the distribution column; and the column
cannot be null. The test lists every table and every constraint of the migrated schema.

TO_CHANGE names what is still in the way, as "table: what". Like the list of
tools/function_length.py it may only shrink: a new table or constraint in the way fails, and
so does a listed one that is no longer in the way.
"""

from __future__ import annotations

import pytest
from django.db import connection

# Shared by every namespace: what they hold is admin-wide or the service's own.
REFERENCE = {
    "accounts_apikey": "a key may span several namespaces",
    "audit_chainhead": "one row a chain: its key is the distribution value",
    "audit_chainverification": "a walk of every chain",
    "governance_overviewsnapshot": "an overview of several namespaces",
    "memories_vectorfill": "one row per embedding column of the whole table",
    "namespaces_namespace": "the namespaces themselves",
}
REFERENCE_PREFIXES = ("auth_", "django_", "axes_")  # Django's and django-axes' own

# Distributed by another column than namespace_id: audit events without a namespace belong to
# the global chain, 0, and a distribution column cannot be null.
COLUMN = {"audit_auditevent": "chain"}
NAMESPACE_COLUMN = "namespace_id"

# Primary keys are the id alone, and foreign keys point at them: composite keys are still to
# come. The unique keys listed are global ones, which cannot take the namespace without
# changing how their rows are found.
TO_CHANGE = frozenset(
    {
        "accounts_apikey_namespaces: primary key (id)",
        "audit_auditevent: primary key (id)",
        "audit_auditevent: unique (hash)",  # across every chain, not within one
        "context_playgroundconfig: primary key (id)",
        "evaluation_caseresult: foreign key (case_id) to evaluation_evalcase",
        "evaluation_caseresult: foreign key (run_id) to evaluation_evalrun",
        "evaluation_caseresult: primary key (id)",
        "evaluation_evalcase: foreign key (eval_set_id) to evaluation_evalset",
        "evaluation_evalcase: foreign key (subject_id) to memories_subject",
        "evaluation_evalcase: primary key (id)",
        "evaluation_evalrun: foreign key (eval_set_id) to evaluation_evalset",
        "evaluation_evalrun: foreign key (variant_id) to evaluation_variant",
        "evaluation_evalrun: primary key (id)",
        "evaluation_evalset: primary key (id)",
        "evaluation_variant: primary key (id)",
        "memories_consolidationlog: foreign key (job_id) to memories_job",
        "memories_consolidationlog: foreign key (subject_id) to memories_subject",
        "memories_consolidationlog: primary key (id)",
        "memories_datakey: foreign key (subject_id) to memories_subject",
        "memories_datakey: primary key (id)",
        "memories_job: foreign key (subject_id) to memories_subject",
        "memories_job: primary key (id)",
        "memories_memory: foreign key (subject_id) to memories_subject",
        "memories_memory: primary key (id)",
        "memories_memoryversion: foreign key (memory_id) to memories_memory",
        "memories_memoryversion: primary key (id)",
        "memories_message: foreign key (session_id) to memories_session",
        "memories_message: primary key (id)",
        "memories_recalllog: foreign key (subject_id) to memories_subject",
        "memories_recalllog: primary key (id)",
        "memories_session: foreign key (subject_id) to memories_subject",
        "memories_session: primary key (id)",
        "memories_sessionsummary: foreign key (session_id) to memories_session",
        "memories_sessionsummary: primary key (id)",
        "memories_subject: primary key (id)",
        "namespaces_membership: primary key (id)",
        "privacy_erasurereceiptcode: primary key (id)",
        "privacy_erasurereceiptcode: unique (code_hash)",  # a secret's: found before its namespace
        "privacy_portallink: foreign key (subject_id) to memories_subject",
        "privacy_portallink: primary key (id)",
        "privacy_portallink: unique (token_hash)",  # a secret's: found before its namespace
        "privacy_portalsession: foreign key (link_id) to privacy_portallink",
        "privacy_portalsession: foreign key (subject_id) to memories_subject",
        "privacy_portalsession: primary key (id)",
        "privacy_portalsession: unique (key_hash)",  # a secret's: found before its namespace
        "privacy_schedulederasure: foreign key (subject_id) to memories_subject",
        "privacy_schedulederasure: primary key (id)",
        "recall_recallfeedback: foreign key (recall_id) to memories_recalllog",
        "recall_recallfeedback: foreign key (subject_id) to memories_subject",
        "recall_recallfeedback: primary key (id)",
    }
)

_TABLES = """
    SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
"""
_COLUMNS = """
    SELECT c.relname, a.attname, a.attnotnull FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND a.attnum > 0 AND NOT a.attisdropped
"""
# Primary keys, unique constraints and unique indexes (a unique index without a constraint
# binds a node the same way), and foreign keys with the table they point at.
_KEYS = """
    SELECT t.relname,
           CASE con.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique'
                ELSE 'foreign key' END,
           ARRAY(SELECT a.attname FROM unnest(con.conkey) AS k
                 JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k),
           COALESCE(r.relname, '')
    FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace LEFT JOIN pg_class r ON r.oid = con.confrelid
    WHERE n.nspname = current_schema() AND con.contype IN ('p', 'u', 'f')
    UNION ALL
    SELECT t.relname, 'unique',
           ARRAY(SELECT a.attname FROM unnest(i.indkey) AS k
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k), ''
    FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = current_schema() AND i.indisunique
      AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
"""


def _reference(table: str) -> bool:
    return table in REFERENCE or table.startswith(REFERENCE_PREFIXES)


def in_the_way() -> tuple[set[str], set[str]]:
    """(what stops a distributed table from being distributed, tables left unclassified)."""
    with connection.cursor() as cursor:
        cursor.execute(_TABLES)
        tables = {row[0] for row in cursor.fetchall()}
        cursor.execute(_COLUMNS)
        columns = {(table, name): not_null for table, name, not_null in cursor.fetchall()}
        cursor.execute(_KEYS)
        keys = cursor.fetchall()
    column = {table: COLUMN.get(table, NAMESPACE_COLUMN) for table in tables}
    distributed = {t for t in tables if not _reference(t) and (t, column[t]) in columns}
    problems = set()
    for table in sorted(distributed):
        if not columns[(table, column[table])]:
            problems.add(f"{table}: {column[table]} may be null")
    for table, kind, key_columns, target in keys:
        if table not in distributed or column[table] in key_columns:
            continue
        if kind == "foreign key" and target not in distributed:
            continue  # to a reference table: every node holds it whole
        what = f"{kind} ({', '.join(sorted(key_columns))})"
        problems.add(f"{table}: {what}" + (f" to {target}" if target else ""))
    unclassified = {t for t in tables if not _reference(t) and t not in distributed}
    return problems, unclassified


@pytest.mark.django_db
def test_every_table_is_a_namespace_s_or_shared_by_all() -> None:
    _problems, unclassified = in_the_way()
    assert unclassified == set(), "add each to REFERENCE or give it the column"


@pytest.mark.django_db
def test_no_new_key_stands_in_the_way_of_distributing_by_namespace() -> None:
    problems, _unclassified = in_the_way()
    assert sorted(problems - TO_CHANGE) == []


@pytest.mark.django_db
def test_the_list_of_keys_still_to_change_only_shrinks() -> None:
    problems, _unclassified = in_the_way()
    assert sorted(TO_CHANGE - problems) == [], "remove each from TO_CHANGE"


@pytest.mark.django_db
def test_it_finds_a_unique_key_without_the_namespace_column() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_memory ADD CONSTRAINT probe_unique UNIQUE (id, kind)")
    problems, _unclassified = in_the_way()
    assert "memories_memory: unique (id, kind)" in problems
    assert "memories_memory: unique (id, kind)" not in TO_CHANGE
