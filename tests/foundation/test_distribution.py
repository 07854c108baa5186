"""Ready to distribute by namespace: every table of the schema is a namespace's, to be spread
over nodes by its namespace column (Citus's distribution column, or native hash
partitioning's key), or shared by every namespace (a reference table, copied whole to each
node). A node can enforce a distributed table's primary and unique keys, and its foreign keys
to other distributed tables, only if they carry the distribution column; the column cannot
be null; and a reference table cannot point at a distributed one. The test lists every table
and every constraint of the migrated schema (memoryhub/distribution.py makes the keys).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import IntegrityError, OperationalError, connection, migrations, transaction
from django.db.migrations.state import ProjectState
from django.db.models import Count
from django.utils import timezone

from apps.memories.models import Subject
from apps.namespaces.models import Namespace
from apps.privacy.models import ScheduledErasure
from memoryhub import distribution
from memoryhub.distribution import keyed_by_namespace

# Shared by every namespace: what they hold is admin-wide or the service's own.
REFERENCE = {
    "accounts_apikey": "a key may span several namespaces",
    "accounts_ssoidentity": "a dashboard user's identity at the provider, whatever the namespace",
    "audit_chainhead": "one row a chain: its key is the distribution value",
    "audit_chainverification": "a walk of every chain",
    "governance_overviewsnapshot": "an overview of several namespaces",
    "memories_vectorfill": "one row per embedding column of the whole table",
    "namespaces_everynamespacerole": "a role in every namespace, those created later included",
    "namespaces_namespace": "the namespaces themselves",
}
REFERENCE_PREFIXES = ("auth_", "django_", "axes_")  # Django's and django-axes' own

# Distributed by another column than namespace_id: audit events without a namespace belong to
# the global chain, 0, and a distribution column cannot be null.
COLUMN = {"audit_auditevent": "chain"}
NAMESPACE_COLUMN = "namespace_id"


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
        if kind == "foreign key" and table not in distributed and target in distributed:
            problems.add(f"{table}: foreign key ({', '.join(sorted(key_columns))}) to {target}")
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
def test_every_key_carries_the_distribution_column() -> None:
    problems, _unclassified = in_the_way()
    assert sorted(problems) == []


@pytest.mark.django_db
def test_every_foreign_key_between_a_namespace_s_models_is_in_the_database() -> None:
    """Django declares them without a constraint (db_constraint=False): the database's
    (column, namespace_id) keys are the only check, and must all be there."""
    expected = {
        (model._meta.db_table, field.column, field.related_model._meta.db_table)
        for model in apps.get_models()
        for field in model._meta.concrete_fields
        if field.many_to_one
        and keyed_by_namespace(model)
        and keyed_by_namespace(field.related_model)
    }
    with connection.cursor() as cursor:
        cursor.execute(_KEYS)
        found = {
            (table, next(iter(set(columns) - {NAMESPACE_COLUMN})), target)
            for table, kind, columns, target in cursor.fetchall()
            if kind == "foreign key" and NAMESPACE_COLUMN in columns and len(columns) == 2
        }
    assert len(expected) > 20
    assert expected - found == set()


@pytest.mark.django_db
def test_it_finds_a_unique_key_without_the_namespace_column() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_memory ADD CONSTRAINT probe_unique UNIQUE (id, kind)")
    problems, _unclassified = in_the_way()
    assert problems == {"memories_memory: unique (id, kind)"}


@pytest.mark.django_db
def test_it_finds_a_new_table_s_nullable_column_and_primary_key_without_it() -> None:
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE probe_rows (id bigint PRIMARY KEY, namespace_id bigint)")
    problems, _unclassified = in_the_way()
    assert problems == {"probe_rows: namespace_id may be null", "probe_rows: primary key (id)"}


@pytest.mark.django_db
def test_it_finds_a_reference_table_pointing_at_a_distributed_one() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "ALTER TABLE governance_overviewsnapshot ADD COLUMN subject_id uuid, "
            "ADD COLUMN namespace_id bigint, ADD CONSTRAINT probe_fk FOREIGN KEY "
            "(subject_id, namespace_id) REFERENCES memories_subject (id, namespace_id)"
        )
    problems, _unclassified = in_the_way()
    assert problems == {
        "governance_overviewsnapshot: foreign key (namespace_id, subject_id) to memories_subject"
    }


@pytest.mark.django_db
def test_a_row_cannot_point_at_another_namespace_s_row() -> None:
    one = Namespace.objects.create(slug="one", name="One")
    other = Namespace.objects.create(slug="other", name="Other")
    subject = Subject.objects.create(namespace=one, external_id="u1")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # Django's are deferred to the commit
    ScheduledErasure.objects.create(namespace=one, subject=subject, run_at=timezone.now())
    with pytest.raises(IntegrityError, match="subject_id_namespace_id_fk"), transaction.atomic():
        ScheduledErasure.objects.create(namespace=other, subject=subject, run_at=timezone.now())


@pytest.mark.django_db
def test_a_namespace_s_rows_can_be_grouped_with_their_columns_selected() -> None:
    """Django would group by `id` alone, which PostgreSQL allows only for a whole primary key:
    MemoryHub's backend groups those tables by every column selected."""
    namespace = Namespace.objects.create(slug="one", name="One")
    subject = Subject.objects.create(namespace=namespace, external_id="u1")
    ScheduledErasure.objects.create(namespace=namespace, subject=subject, run_at=timezone.now())
    grouped = Subject.objects.annotate(erasures=Count("id", distinct=True)).get()
    assert (grouped.external_id, grouped.erasures) == ("u1", 1)
    assert keyed_by_namespace(Subject)
    assert not keyed_by_namespace(Namespace)


@dataclass
class _Holder:
    """A transaction on another connection holding a table until `release` is set."""

    table: str
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    let_go: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {self.table} IN ACCESS EXCLUSIVE MODE")
                self.held.set()
                self.release.wait(60)
        finally:
            connection.close()
            self.let_go.set()


def _add_check(attempts: int, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """A key change on a table another transaction holds until the change has timed out on
    it once (waiting 0.1 s a try): the back-offs it took between tries. The holder lets go
    on the first back-off, which waits until it has: no step depends on the clock."""
    monkeypatch.setattr(distribution, "LOCK_TIMEOUT", "100ms")
    monkeypatch.setattr(distribution, "ATTEMPTS", attempts)
    change = distribution.Retried(
        migrations.RunSQL("ALTER TABLE memories_job ADD CONSTRAINT probe CHECK (true)"),
        points_at="memories_subject",
    )
    holder = _Holder("memories_job")
    back_offs: list[float] = []

    def back_off(seconds: float) -> None:
        back_offs.append(seconds)
        holder.release.set()
        assert holder.let_go.wait(60), "the holder never let go"

    monkeypatch.setattr(distribution, "time", SimpleNamespace(sleep=back_off))
    thread = threading.Thread(target=holder.run)
    thread.start()
    try:
        assert holder.held.wait(60), "the holder never got the table"
        with connection.schema_editor(atomic=False) as editor:
            change.database_forwards("pipeline", editor, ProjectState(), ProjectState())
        return back_offs
    finally:
        holder.release.set()
        thread.join()


@pytest.mark.django_db(transaction=True)
def test_a_key_change_waits_briefly_for_a_lock_and_tries_again(monkeypatch) -> None:
    back_offs = _add_check(attempts=30, monkeypatch=monkeypatch)
    assert back_offs == [0.05]  # timed out once, then got the table once the holder let go
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_constraint WHERE conname = 'probe'")
        assert cursor.fetchone() == (1,)
        cursor.execute("SHOW lock_timeout")
        assert cursor.fetchone() == ("0",)  # as it was
        cursor.execute("ALTER TABLE memories_job DROP CONSTRAINT probe")


@pytest.mark.django_db(transaction=True)
def test_without_tries_left_a_key_change_gives_up_instead_of_queueing_writes(
    monkeypatch,
) -> None:
    with pytest.raises(OperationalError, match="lock timeout"):
        _add_check(attempts=1, monkeypatch=monkeypatch)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_constraint WHERE conname = 'probe'")
        assert cursor.fetchone() is None


_PROBE_TABLES = """
    CREATE TABLE probe_target (id bigint PRIMARY KEY, namespace_id bigint NOT NULL);
    CREATE TABLE probe_row (id bigint PRIMARY KEY, namespace_id bigint NOT NULL,
                            target_id bigint);
    INSERT INTO probe_target VALUES (1, 7);
    INSERT INTO probe_row VALUES (1, 7, 1);
"""
_PROBE_KEYS = """
    SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint
    WHERE conrelid IN ('probe_target'::regclass, 'probe_row'::regclass) AND contype IN ('p', 'f')
    ORDER BY 1, 2
"""


def _run(operations: list, backwards: bool = False) -> list[tuple[str, str]]:
    with connection.schema_editor(atomic=False) as editor:
        for operation in reversed(operations) if backwards else operations:
            run = operation.database_backwards if backwards else operation.database_forwards
            run("memories", editor, ProjectState(), ProjectState())
    with connection.cursor() as cursor:
        cursor.execute(_PROBE_KEYS)
        return cursor.fetchall()


@pytest.mark.django_db(transaction=True)
def test_key_changes_finish_when_run_again_and_undo_keeping_what_points_at_them() -> None:
    """A key migration is not one transaction: one stopped part way is finished by running
    it again, even over the invalid index a stopped concurrent build leaves."""
    keys = [
        distribution.key_index("probe_target"),
        distribution.key_index("probe_row"),
        distribution.foreign_key("probe_row", "target_id", "probe_target"),
        distribution.primary_key("probe_row"),
        distribution.validate("probe_row", "target_id"),
        distribution.primary_key("probe_target"),
    ]
    with connection.cursor() as cursor:
        cursor.execute(_PROBE_TABLES)
    try:
        _run(keys[:2])
        with connection.cursor() as cursor:  # as a build stopped part way leaves it
            cursor.execute(
                "UPDATE pg_index SET indisvalid = false "
                "WHERE indexrelid = 'probe_target_id_namespace_id_key'::regclass"
            )
        done = _run(keys)
        assert done == _run(keys)
        assert done == [
            (
                "probe_row",
                "FOREIGN KEY (target_id, namespace_id) REFERENCES "
                "probe_target(id, namespace_id) DEFERRABLE INITIALLY DEFERRED",
            ),
            ("probe_row", "PRIMARY KEY (id, namespace_id)"),
            ("probe_target", "PRIMARY KEY (id, namespace_id)"),
        ]
        # Undoing the target's key alone keeps the foreign key pointing at it.
        undone = _run(keys[5:], backwards=True)
        assert ("probe_target", "PRIMARY KEY (id)") in undone
        assert done[0] in undone
        assert _run(keys, backwards=True) == [
            ("probe_row", "PRIMARY KEY (id)"),
            ("probe_target", "PRIMARY KEY (id)"),
        ]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS probe_row, probe_target")
