"""How long the migrations that make the keys carry the namespace take on a large install, and
whether writes go on meanwhile (memoryhub/distribution.py builds them concurrently).

    .venv/bin/python bench/key_migration_bench.py [--memories 300000] [--namespaces 20]
                                                  [--subjects 2000] [--quiet-seconds 10]

Where. A database of its own, created for the run from the migrations (`bench_key_migration`,
or KEY_BENCH_DATABASE) and dropped at the end, also on failure or SIGTERM. It is migrated
back to before the keys changed (memories 0020, pipeline 0008, recall 0007, evaluation 0004,
privacy 0004, audit 0008, context 0001, namespaces 0006, accounts 0003).

Load. `--subjects` subjects spread over `--namespaces` namespaces; `--memories` memories, one
version each, in one INSERT … SELECT each, cloned from a row written through the ORM (the
content is placeholder bytes: no embedding, no encryption; the keys' work does not depend on
them). Then VACUUM ANALYZE.

Timing. A writer thread on its own connection adds a memory and its version per transaction,
as fast as it can, for `--quiet-seconds` (the baseline). Then, as the comparison, the main
thread changes the two largest tables' keys the plain way, as Django's own schema operations
would (memories' and versions' primary keys and the versions' foreign key, each ALTER TABLE
building its index while it holds the table), in one transaction that it rolls back; then
`--quiet-seconds` more; then it applies every migration after that point (the migrations'
wall time is printed, and the longest steps), then `--quiet-seconds` more. Printed:
writes/s and the latency p50 / p99 / max of the writer's transactions in each phase; the
ratio of writes/s during the migrations to before; and the longest a write waited under the
plain change and under the migrations, with their ratio: what holding the tables costs.
Then the keys are checked (tests/foundation/test_distribution.py's listing finds nothing in
the way). The CPU is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ["DATABASE_TEST_NAME"] = os.environ.get("KEY_BENCH_DATABASE", "bench_key_migration")

import django

django.setup()

from django.db import connection, connections, transaction  # noqa: E402
from django.db.migrations.executor import MigrationExecutor  # noqa: E402

from apps.memories.models import Memory, MemoryVersion, Subject  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from bench.machine import cpu, terminate_as_exit  # noqa: E402
from bench.recall_bench import percentile  # noqa: E402
from tests.foundation.test_distribution import in_the_way  # noqa: E402

BEFORE = [
    ("memories", "0020_keys_carry_namespace"),
    ("pipeline", "0008_keys_carry_namespace"),
    ("recall", "0007_keys_carry_namespace"),
    ("evaluation", "0004_keys_carry_namespace"),
    ("privacy", "0004_keys_carry_namespace"),
    ("audit", "0008_chain_index"),
    ("context", "0001_initial"),
    ("namespaces", "0006_recall_config"),
    ("accounts", "0003_api_key_default_subject"),
]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _columns(table: str, without: set[str]) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            [table],
        )
        return [name for (name,) in cursor.fetchall() if name not in without]


def _clone_memories(template: Memory, count: int, start: int) -> None:
    """`count` copies of `template` (a new id each, with one version cloned from its own),
    spread over the subjects in turn from `start`."""
    keep = _columns("memories_memory", {"id", "namespace_id", "subject_id"})
    version_keep = _columns("memories_memoryversion", {"id", "namespace_id", "memory_id"})
    picked = ", ".join(f"t.{name}" for name in keep)
    version_picked = ", ".join(f"v.{name}" for name in version_keep)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH made AS (
                INSERT INTO memories_memory (id, namespace_id, subject_id, {", ".join(keep)})
                SELECT gen_random_uuid(), s.namespace_id, s.id, {picked}
                FROM generate_series(%s, %s) AS g
                JOIN bench_subjects s ON s.n = g %% (SELECT count(*) FROM bench_subjects)
                CROSS JOIN memories_memory t WHERE t.id = %s
                RETURNING id, namespace_id
            )
            INSERT INTO memories_memoryversion (memory_id, namespace_id, {", ".join(version_keep)})
            SELECT made.id, made.namespace_id, {version_picked}
            FROM made CROSS JOIN memories_memoryversion v WHERE v.memory_id = %s
            """,  # noqa: S608 (column names from the catalog)
            [start, start + count - 1, template.pk, template.pk],
        )


def load(args: argparse.Namespace) -> Memory:
    started = time.perf_counter()
    namespaces = [
        Namespace.objects.create(slug=f"bench-{n}", name=f"Bench {n}")
        for n in range(args.namespaces)
    ]
    Subject.objects.bulk_create(
        Subject(namespace=namespaces[n % len(namespaces)], external_id=f"user-{n}")
        for n in range(args.subjects)
    )
    template = Memory.objects.create(
        namespace=namespaces[0],
        subject=Subject.objects.filter(namespace=namespaces[0]).first(),
        content_encrypted=b"\0" * 120,
        key_version=1,
    )
    MemoryVersion.objects.create(
        namespace=namespaces[0],
        memory=template,
        version=1,
        changed_by="bench",
        content_encrypted=b"\0" * 120,
        key_version=1,
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE bench_subjects AS SELECT (row_number() OVER (ORDER BY id)) - 1 AS n, "
            "id, namespace_id FROM memories_subject"
        )
        cursor.execute("CREATE UNIQUE INDEX ON bench_subjects (n)")
    batch = 100_000
    for start in range(0, args.memories, batch):
        _clone_memories(template, min(batch, args.memories - start), start)
        log(f"  {min(start + batch, args.memories):,} memories")
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_subjects")
        cursor.execute("VACUUM ANALYZE")
    log(f"loaded in {time.perf_counter() - started:.1f} s")
    return template


class Writer(threading.Thread):
    """A memory and its version per transaction, as fast as it can, on its own connection."""

    def __init__(self, template: Memory, subjects: list[tuple[uuid.UUID, int]]) -> None:
        super().__init__(daemon=True)
        self.template, self.subjects = template, subjects
        self.samples: list[tuple[float, float]] = []  # (when it started, seconds)
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            n = 0
            while not self.stop.is_set():
                subject_id, namespace_id = self.subjects[n % len(self.subjects)]
                n += 1
                began = time.perf_counter()
                with transaction.atomic():
                    memory = Memory.objects.create(
                        namespace_id=namespace_id,
                        subject_id=subject_id,
                        content_encrypted=b"\0" * 120,
                        key_version=1,
                    )
                    MemoryVersion.objects.create(
                        namespace_id=namespace_id,
                        memory=memory,
                        version=1,
                        changed_by="bench",
                        content_encrypted=b"\0" * 120,
                        key_version=1,
                    )
                self.samples.append((began, time.perf_counter() - began))
        except BaseException as error:  # reported by the main thread
            self.error = error
        finally:
            connections.close_all()

    def between(self, start: float, end: float) -> list[float]:
        return [seconds for began, seconds in self.samples if start <= began < end]


def migrate_forward(log_step: list[tuple[str, float]]) -> float:
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    started = time.perf_counter()
    for migration, _backwards in plan:
        began = time.perf_counter()
        MigrationExecutor(connection).migrate([(migration.app_label, migration.name)])
        log_step.append((f"{migration.app_label}.{migration.name}", time.perf_counter() - began))
    return time.perf_counter() - started


PLAIN = (
    # Both tables at once, in the writer's order: one at a time, the writer and the change
    # deadlock.
    "LOCK TABLE memories_memory, memories_memoryversion IN ACCESS EXCLUSIVE MODE",
    "ALTER TABLE memories_memory DROP CONSTRAINT memories_memory_pkey CASCADE, "
    "ADD PRIMARY KEY (id, namespace_id)",
    "ALTER TABLE memories_memoryversion DROP CONSTRAINT memories_memoryversion_pkey, "
    "ADD PRIMARY KEY (id, namespace_id), ADD FOREIGN KEY (memory_id, namespace_id) "
    "REFERENCES memories_memory (id, namespace_id)",
)


class RolledBack(Exception):
    pass


def change_plainly() -> None:
    """The comparison: the same keys on the two largest tables the plain way, rolled back."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            for statement in PLAIN:
                cursor.execute(statement)
            raise RolledBack
    except RolledBack:
        pass


def report(name: str, seconds: list[float], span: float) -> float:
    rate = len(seconds) / span if span else float("nan")
    print(
        f"{name:>7}: {len(seconds):,} writes in {span:.1f} s, {rate:,.1f} writes/s; "
        f"p50 / p99 / max {percentile(seconds, 50) * 1000:.1f} / "
        f"{percentile(seconds, 99) * 1000:.1f} / {max(seconds, default=0) * 1000:.0f} ms"
    )
    return rate


def run(args: argparse.Namespace) -> bool:
    creation = connection.creation
    log(f"creating the bench's database {os.environ['DATABASE_TEST_NAME']} (migrations)")
    original = creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    writer: Writer | None = None
    try:
        log("migrating back to before the keys carried the namespace")
        MigrationExecutor(connection).migrate(BEFORE)
        template = load(args)
        subjects = list(Subject.objects.values_list("id", "namespace_id"))
        writer = Writer(template, subjects)
        writer.start()
        time.sleep(args.quiet_seconds)
        plain_start = time.perf_counter()
        change_plainly()
        plain_end = time.perf_counter()
        time.sleep(args.quiet_seconds)
        steps: list[tuple[str, float]] = []
        migration_start = time.perf_counter()
        took = migrate_forward(steps)
        migration_end = time.perf_counter()
        time.sleep(args.quiet_seconds)
        writer.stop.set()
        writer.join()
        if writer.error is not None:
            raise writer.error
        first = writer.samples[0][0]
        print(
            f"key migrations on {args.memories:,} memories (and as many versions), "
            f"{args.subjects:,} subjects, {args.namespaces} namespaces [{cpu()}]"
        )
        print(f"migrations: {took:.1f} s in all; the longest steps:")
        for name, seconds in sorted(steps, key=lambda step: -step[1])[:4]:
            print(f"  {name}: {seconds:.1f} s")
        before = report("before", writer.between(first, plain_start), plain_start - first)
        # Until the first write after the plain change: the one it held back ends after it.
        plain_writes = writer.between(plain_start, plain_end)
        report("plain", plain_writes, plain_end - plain_start)
        during = report(
            "during",
            writer.between(migration_start, migration_end),
            migration_end - migration_start,
        )
        end = writer.samples[-1][0]
        report("after", writer.between(migration_end, end + 1e-9), end - migration_end)
        print(f"writes/s during the migrations / before: {during / before:.2f}x")
        held_plain = max(
            (
                seconds
                for began, seconds in writer.samples
                if began < plain_end and began + seconds > plain_start
            ),
            default=0.0,
        )
        held_migrations = max(
            (
                seconds
                for began, seconds in writer.samples
                if began < migration_end and began + seconds > migration_start
            ),
            default=0.0,
        )
        print(
            f"longest write wait: plain change {held_plain * 1000:.0f} ms "
            f"(it took {plain_end - plain_start:.1f} s), migrations {held_migrations * 1000:.0f} "
            f"ms: {held_plain / max(held_migrations, 1e-3):.1f}x shorter"
        )
        problems, unclassified = in_the_way()
        print(f"keys in the way after the migrations: {sorted(problems) or 'none'}")
        return not problems and not unclassified
    finally:
        if writer is not None:
            writer.stop.set()
            writer.join()
        log("dropping the bench's database")
        connections.close_all()
        creation.destroy_test_db(original, verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=300_000)
    parser.add_argument("--namespaces", type=int, default=20)
    parser.add_argument("--subjects", type=int, default=2_000)
    parser.add_argument("--quiet-seconds", type=float, default=10.0)
    args = parser.parse_args()
    with terminate_as_exit():
        passed = run(args)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
