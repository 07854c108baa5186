"""Write throughput through the service layer, and what encryption and audit cost of it.

    .venv/bin/python bench/write_bench.py [--n 2000] [--rounds 3] [--subjects 50]

Measures memories/s through `apps.memories.services.memory_create` (content sealed with
AES-GCM, keyword index, version row, audit event, one transaction per write, a fresh KeyCache
per write as in an API request) in four variants, all in this one process and run:

  aes             the product as shipped (no webhook endpoint in the namespace)
  aes+webhook     the same, with a webhook endpoint subscribed to memory.created: each write
                  also writes its event and delivery rows (the outbox; sending them is a
                  worker's or the dispatcher thread's work, off here)
  noop            content "encrypted" by a no-op cipher (plaintext bytes)
  noop-no-audit   no-op cipher and `audit_record` replaced by a no-op

Rounds alternate the variants (rotating their order each round, after a warm-up of each) to
spread drift, and the table shows the median writes/s per variant. The goals: encryption, and
encryption plus audit, each cost at most 15% of write throughput; webhook events under 10%.

Not in the ratios, because the no-op cipher keeps them: fetching and unwrapping the data
key (per write, as per request) and the keyed-hash keyword index. Subjects (their data keys
and audit events) are created before timing, so every timed write is steady state.

Writes to the configured database (the embedded one by default) in a temporary namespace
that is deleted at the end, also on failure. Audit events of the aes and noop variants stay:
the audit log is append-only by design.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402

from apps.audit.actors import Actor  # noqa: E402
from apps.memories import row_encryption  # noqa: E402
from apps.memories.embeddings import normalise, set_provider  # noqa: E402
from apps.memories.services import NewMemory, memory_create, subject_get_or_create  # noqa: E402
from apps.memories.services import memories as memory_services  # noqa: E402
from apps.memories.services import subjects as subject_services  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from apps.namespaces.services import namespace_create  # noqa: E402
from apps.webhooks.services import NewEndpoint, endpoint_create, endpoint_delete  # noqa: E402

TARGET = 0.15
WEBHOOK_TARGET = 0.10
ACTOR = Actor.system("write-bench")

# --- Deterministic, realistic content: 1-3 sentences about a user ----------------------------

_SUBJECTS = ["Prefers", "Dislikes", "Usually asks for", "Mentioned", "Is learning", "Avoids"]
_THINGS = [
    "green tea in the morning",
    "short answers with code examples",
    "meetings after 4pm",
    "the Lisbon office",
    "vegetarian restaurants near the station",
    "Rust for side projects",
    "window seats on long flights",
    "weekly summaries on Friday",
    "dark mode in every editor",
    "Spanish lessons on Tuesdays",
]
_FOLLOW_UPS = [
    "This came up again in the last session.",
    "They said it twice, so it is probably stable.",
    "It changed after the move to Berlin last spring.",
    "Their manager confirmed it during the quarterly review.",
    "Mention it only when it is relevant to the request.",
    "They asked us to remember this for future trips.",
]


def make_contents(n: int, seed: int = 20_240_601) -> list[str]:
    rng = random.Random(seed)
    contents = []
    for index in range(n):
        sentences = [f"{rng.choice(_SUBJECTS)} {rng.choice(_THINGS)} (note {index})."]
        sentences += rng.sample(_FOLLOW_UPS, k=rng.randint(0, 2))
        contents.append(" ".join(sentences))
    return contents


# --- The variants ----------------------------------------------------------------------------


class NoOpCipher:
    """Stores the plaintext bytes: the baseline that costs no cryptography."""

    def encrypt(self, data_key: bytes, plaintext: str, associated: Any) -> bytes:
        return plaintext.encode()

    def decrypt(self, data_key: bytes, blob: bytes, associated: Any) -> str:
        return bytes(blob).decode()


@dataclass
class _NoEvent:
    pk: int = 0


def _no_audit(**kwargs: Any) -> _NoEvent:
    return _NoEvent()


@contextmanager
def webhook_endpoint(namespace: Namespace) -> Iterator[None]:
    """An endpoint of the namespace subscribed to memory.created, for the variant's writes."""
    created = endpoint_create(
        actor=ACTOR,
        namespace=namespace,
        item=NewEndpoint(url="http://127.0.0.1:9/hooks", events=["memory.created"]),
        created_by="write-bench",
        creator_reads_memories=False,
    )
    try:
        yield
    finally:
        endpoint_delete(actor=ACTOR, endpoint=created.endpoint)


@contextmanager
def variant(name: str, namespace: Namespace) -> Iterator[None]:
    original_cipher, original_audit = row_encryption.cipher, memory_services.audit_record
    try:
        if name == "aes+webhook":
            with webhook_endpoint(namespace):
                yield
            return
        if name in ("noop", "noop-no-audit"):
            row_encryption.cipher = NoOpCipher()
        if name == "noop-no-audit":
            memory_services.audit_record = subject_services.audit_record = _no_audit
        yield
    finally:
        row_encryption.cipher = original_cipher
        memory_services.audit_record = subject_services.audit_record = original_audit


VARIANTS = ["aes", "aes+webhook", "noop", "noop-no-audit"]


def run_writes(namespace: Namespace, subjects: list[str], contents: list[str]) -> float:
    """Write every content (round-robin over the subjects); returns writes per second."""
    started = time.perf_counter()
    for index, content in enumerate(contents):
        memory_create(
            actor=ACTOR,
            namespace=namespace,
            item=NewMemory(
                subject_external_id=subjects[index % len(subjects)], content=content, tags=["bench"]
            ),
        )
    return len(contents) / (time.perf_counter() - started)


def measure(n: int, rounds: int, subject_count: int, log: Callable[[str], None]) -> None:
    contents = make_contents(n)
    slug = f"bench-write-{secrets.token_hex(4)}"
    namespace = namespace_create(actor=ACTOR, slug=slug, name="Write benchmark (temporary)")
    try:
        subjects = [f"bench-user-{index:03d}" for index in range(subject_count)]
        for subject in subjects:  # first use creates the subject, its data key and an event
            subject_get_or_create(actor=ACTOR, namespace=namespace, external_id=subject)

        log(f"namespace {slug}: {n} writes x {len(VARIANTS)} variants x {rounds} rounds")
        warm_up = contents[: max(50, n // 10)]
        for name in VARIANTS:
            with variant(name, namespace):
                run_writes(namespace, subjects, warm_up)

        results: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for round_index in range(rounds):
            shift = round_index % len(VARIANTS)
            order = VARIANTS[shift:] + VARIANTS[:shift]
            for name in order:
                with variant(name, namespace):
                    rate = run_writes(namespace, subjects, contents)
                results[name].append(rate)
                log(f"  round {round_index + 1}  {name:<14} {rate:8.1f} writes/s")
        report(results)
    finally:
        Namespace.objects.filter(pk=namespace.pk).delete()
        log(f"deleted namespace {slug} (its memories, versions, subjects and data keys)")


def report(results: dict[str, list[float]]) -> None:
    median = {name: statistics.median(rates) for name, rates in results.items()}
    print()
    print(f"{'variant':<16}{'writes/s (median)':>20}{'ms/write':>12}{'writes/s by round':>30}")
    for name, rates in results.items():
        spread = " ".join(f"{rate:.0f}" for rate in rates)
        print(f"{name:<16}{median[name]:>20.1f}{1000 / median[name]:>12.2f}{spread:>30}")
    print()
    # Overheads in time per write (the inverse of writes/s): aes time / baseline time - 1.
    encryption_overhead = median["noop"] / median["aes"] - 1
    both_overhead = median["noop-no-audit"] / median["aes"] - 1
    webhook_overhead = median["aes"] / median["aes+webhook"] - 1
    for label, value, target in (
        ("encryption overhead         = aes/noop - 1", encryption_overhead, TARGET),
        ("encryption+audit overhead   = aes/(noop, no audit) - 1", both_overhead, TARGET),
        ("webhook events overhead     = aes/(aes+webhook) - 1", webhook_overhead, WEBHOOK_TARGET),
    ):
        verdict = "met" if value <= target else "NOT met"
        print(f"{label:<58}{value:>8.1%}   target <= {target:.0%}: {verdict}")


class ConstantEmbedder:
    """Embedding is the recall issue's cost, measured by recall_eval's ingest figure; here
    every variant gets the same instant vector so the ratios isolate encryption and audit."""

    name = "bench:constant"
    dimensions = 384

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        import numpy as np

        return normalise(np.ones((len(texts), self.dimensions), dtype=np.float32))

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        return self.embed_documents([text])[0]


def main() -> None:
    set_provider(ConstantEmbedder())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="writes per variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--subjects", type=int, default=50)
    args = parser.parse_args()
    if min(args.n, args.rounds, args.subjects) < 1:
        parser.error("--n, --rounds and --subjects must be at least 1")
    settings.DEBUG = False  # no query log: it would cost every variant the same, but noise
    # The aes+webhook variant's endpoint is on loopback; its deliveries stay pending here.
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_WEBHOOK_DISPATCHER = False
    measure(args.n, args.rounds, args.subjects, log=print)


if __name__ == "__main__":
    main()
