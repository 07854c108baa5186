"""Row-level security: the database's own wall between namespaces, behind the selectors'.

Every query of a namespaced request is written with its namespace filter (the first wall).
The second wall is PostgreSQL's: the tables that hold what is remembered carry a policy for
the role `memoryhub_tenant`, which sees (and may write) only the rows of the namespace named
by the transaction's `memoryhub.namespace_id` setting. A namespaced request enters that role
for its transaction (`NamespaceWall.enter`), so a selector that lost its filter still reads
nothing of another namespace, and an insert into another namespace is refused.

Outside a request's wall (migrations, Celery tasks, commands, the admin's cross-namespace
pages) the connection keeps its own role: the tables' owner, to whom the policies do not
apply. The app's database user must therefore own the tables (it runs the migrations) and
be allowed to `SET ROLE memoryhub_tenant`, which the migration grants. Switched off with
`MEMORYHUB_ROW_SECURITY=0` (the policies then stay, unused).

Tables are walled by their `namespace_id`; versions, messages and session summaries by
their parent row, which the parent's own policy walls (their policies predate their copy of
the parent's namespace).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connections, transaction
from django.db.backends.utils import CursorWrapper

TENANT_ROLE = "memoryhub_tenant"
SETTING = "memoryhub.namespace_id"
POLICY = "namespace_wall"

_CURRENT_NAMESPACE = f"NULLIF(current_setting('{SETTING}', true), '')::bigint"

ROLE_SQL = f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{TENANT_ROLE}') THEN
        BEGIN
            CREATE ROLE {TENANT_ROLE} NOLOGIN;
        EXCEPTION
            -- Roles are the cluster's: another database's migration (a parallel test
            -- worker's) made it since the check.
            WHEN duplicate_object OR unique_violation THEN NULL;
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'MemoryHub needs the role {TENANT_ROLE} for row-level security'
                    USING HINT = 'As a superuser: CREATE ROLE {TENANT_ROLE} NOLOGIN; '
                        'GRANT {TENANT_ROLE} TO ' || current_user || ';';
        END;
    END IF;
    IF NOT pg_has_role(current_user, '{TENANT_ROLE}', 'MEMBER') THEN
        BEGIN
            EXECUTE format('GRANT {TENANT_ROLE} TO %I', current_user);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;  -- granted meanwhile
        END;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA public TO {TENANT_ROLE};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {TENANT_ROLE};
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {TENANT_ROLE};
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {TENANT_ROLE};
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {TENANT_ROLE};
"""


def wall_sql(table: str, parent: tuple[str, str] | None = None) -> tuple[str, str]:
    """The statements that wall `table` and take the wall down again (for a migration).

    `parent` is `(column, parent_table)` for a table walled through its parent row."""
    if parent is None:
        condition = f"namespace_id = {_CURRENT_NAMESPACE}"
    else:
        column, parent_table = parent
        condition = f"EXISTS (SELECT FROM {parent_table} p WHERE p.id = {table}.{column})"
    forward = (
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;\n"
        f"CREATE POLICY {POLICY} ON {table} TO {TENANT_ROLE}\n"
        f"    USING ({condition}) WITH CHECK ({condition});"
    )
    backward = (
        f"DROP POLICY IF EXISTS {POLICY} ON {table};\n"
        f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;"
    )
    return forward, backward


def enabled() -> bool:
    return bool(getattr(settings, "MEMORYHUB_ROW_SECURITY", True))


class NamespaceWall:
    """The wall of one transaction: `enter(namespace_id)` puts the connection behind it until
    the `namespace_wall()` block that made this object ends."""

    def __init__(self, using: str) -> None:
        self.using = using
        self.namespace_id: int | None = None
        self._before: tuple[str, str] | None = None

    def enter(self, namespace_id: int) -> None:
        if not enabled():
            return
        if self.namespace_id is not None:
            if self.namespace_id != namespace_id:
                raise RuntimeError("A request's transaction is walled to one namespace.")
            return
        # One round trip: the role and setting from before (read first: the CTE's row is
        # made before the outer select sets them), then the namespace and the role, both
        # local to the transaction (set_config's `true`; 'role' is what SET ROLE sets, with
        # the same membership check).
        with connections[self.using].cursor() as cursor:
            cursor.execute(
                """
                WITH before AS MATERIALIZED (
                    SELECT current_user AS role, current_setting(%s, true) AS setting
                )
                SELECT role, setting, set_config(%s, %s, true), set_config('role', %s, true)
                FROM before
                """,
                [SETTING, SETTING, str(namespace_id), TENANT_ROLE],
            )
            user, setting, _, _ = cursor.fetchone()
        self._before = (user, setting or "")
        self.namespace_id = namespace_id
        connections[self.using].memoryhub_walled = namespace_id  # type: ignore[attr-defined]

    def leave(self) -> None:
        """Back to the role and setting from before `enter`, for the rest of the transaction
        (a test's, or an outer block's). A rolled-back block needs none: PostgreSQL undoes
        its `SET LOCAL`s with it."""
        if self._before is None:
            return
        user, setting = self._before
        with connections[self.using].cursor() as cursor:
            cursor.execute("SELECT set_config('role', %s, true)", [user])
            cursor.execute("SELECT set_config(%s, %s, true)", [SETTING, setting])
        self._before = None
        self.namespace_id = None
        connections[self.using].memoryhub_walled = None  # type: ignore[attr-defined]


@contextmanager
def namespace_wall(
    namespace_id: int | None = None, using: str = "default"
) -> Iterator[NamespaceWall]:
    """A transaction that can be walled to one namespace: at once when `namespace_id` is
    given, or later by `wall.enter(...)`, once the request has resolved its namespace."""
    with transaction.atomic(using=using):
        wall = NamespaceWall(using)
        if namespace_id is not None:
            wall.enter(namespace_id)
        try:
            yield wall
        except BaseException:
            # The block rolls back, and PostgreSQL with it undoes the wall's SET LOCALs.
            connections[using].memoryhub_walled = None  # type: ignore[attr-defined]
            raise
        wall.leave()


WALL_CONDITION = f"namespace_id = {_CURRENT_NAMESPACE}"


@contextmanager
def owner_statement(cursor: CursorWrapper, using: str = "default") -> Iterator[str]:
    """Run one vetted statement as the tables' owner inside a walled transaction, yielding
    the condition that re-imposes the wall in the statement itself ("" when unwalled).

    For the keyword search only: PostgreSQL evaluates a policy before any operator that is
    not leakproof, and `&&` on integer arrays is not, so behind the wall its GIN index is
    never used and a large subject's keyword search scans every row of the subject (x8 the
    time, bench/recall_bench.py --row-security). The statement adds the returned condition to
    its WHERE clause: the rows it can read are still only the walled namespace's."""
    walled = getattr(connections[using], "memoryhub_walled", None)
    if walled is None:
        yield ""
        return
    cursor.execute("SET LOCAL ROLE NONE")
    yield WALL_CONDITION
    cursor.execute(f"SET LOCAL ROLE {TENANT_ROLE}")
