"""Where ingest and recall time goes on this CPU, against the model's own speed in the same run.

    .venv/bin/python bench/cpu_profile.py [--conversation PATH] [--recalls 200] [--rounds 3]

Goals (issue #20, the ratios that carry between hosts):
- ingest (a LoCoMo conversation through the service of `POST …/messages`, as `recall_eval`
  sends it) >= 0.8x the model's batch rate: plain sentence-transformers, float32, batch 32,
  over the same turns, measured in this process;
- recall (`recall_memories`, k=10, over that conversation) p50 <= 2x the p50 of the query
  embedding alone (the same provider's `embed_query` on the same questions, alternated).

Then the profile: ingest under cProfile, its time by stage (cumulative time of the functions
that do each part: the model, encryption, keyword index, extraction, consolidation, SQL), and
recall's stages from its own `timings_ms` (medians) plus the costliest functions outside the
model. Prints the CPU (model name and the flags that matter) beside the figures. The
namespaces are temporary and deleted at the end. Needs ../shared/data (LoCoMo).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import secrets
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

from apps.audit.actors import Actor  # noqa: E402
from apps.evaluation import locomo  # noqa: E402
from apps.evaluation.services import eval_set_import_locomo  # noqa: E402
from apps.memories.embeddings import get_provider, resolve_local_model  # noqa: E402
from apps.memories.models import Memory  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from apps.namespaces.services import namespace_create, namespace_delete  # noqa: E402
from apps.recall.search import RecallRequest, recall_memories  # noqa: E402
from bench.machine import cpu  # noqa: E402

ACTOR = Actor.system("bench/cpu_profile.py")
SUBJECT = "locomo-subject"
DEFAULT_CONVERSATION = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev" / "26.json"
)
# Ingest stages: (label, substrings of "file:function" whose cumulative time is the stage).
STAGES = [
    ("embedding model (documents)", ("embeddings.py:embed_documents",)),
    ("encryption (AES-GCM, data keys)", ("crypto", "encrypt")),
    ("keyword index (tokens, keyed hashes)", ("keyword_index.py:",)),
    ("extraction", ("extraction", "extract")),
    ("consolidation", ("consolidat",)),
    ("SQL (cursor.execute)", ("utils.py:execute", "utils.py:executemany")),
]


class _StatementTimer:
    """An execute wrapper: the time of each SQL statement, by its first words."""

    def __init__(self, into: dict[str, list[float]]) -> None:
        self.into = into

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            label = " ".join(str(sql).split())[:70]
            self.into.setdefault(label, []).append((time.perf_counter() - started) * 1000)


def _stage_seconds(stats: pstats.Stats, needles: tuple[str, ...]) -> float:
    """The largest cumulative time among matching functions (the outermost one of a stage)."""
    best = 0.0
    for (filename, _, name), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        key = f"{Path(filename).name}:{name}"
        if any(needle in key for needle in needles):
            best = max(best, cumulative)
    return best


def _own_functions(stats: pstats.Stats, seconds: float, top: int) -> list[str]:
    """The project's functions (apps/, memoryhub/) with the most cumulative time."""
    root = str(Path(__file__).resolve().parent.parent)
    rows = [
        (cumulative, calls, filename, line, name)
        for (filename, line, name), (_, calls, _, cumulative, _) in stats.stats.items()  # type: ignore[attr-defined]
        if filename.startswith((f"{root}/apps/", f"{root}/memoryhub/"))
    ]
    rows.sort(reverse=True)
    return [
        f"    {cumulative:6.2f} s {cumulative / seconds:5.1%} {calls:6d}x  "
        f"{Path(filename).relative_to(root)}:{line} {name}"
        for cumulative, calls, filename, line, name in rows[:top]
    ]


def plain_model() -> SentenceTransformer:
    """The same weights in plain sentence-transformers, float32 (a model of its own: the
    provider's may have been cast to bfloat16 for its batches)."""
    return SentenceTransformer(
        resolve_local_model(settings.MEMORYHUB_EMBEDDING_MODEL), device="cpu"
    )


def model_rate(plain: SentenceTransformer, texts: list[str]) -> float:
    """Plain sentence-transformers, float32, batch 32: the model's own rate (texts/s)."""
    plain.encode(texts[:64], batch_size=32, show_progress_bar=False)
    started = time.perf_counter()
    plain.encode(texts, batch_size=32, show_progress_bar=False)
    return len(texts) / (time.perf_counter() - started)


def ingest(conversation: locomo.Conversation, profile: bool) -> tuple[float, object, object]:
    namespace = namespace_create(actor=ACTOR, slug=f"cpu-{secrets.token_hex(5)}", name="cpu")
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    eval_set = eval_set_import_locomo(
        actor=ACTOR,
        namespace=namespace,
        name=conversation.name,
        data=conversation,
        subject_external_id=SUBJECT,
        adversarial=False,
    )
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - started
    return seconds, (namespace, eval_set), profiler


def timed_recalls(
    namespace: Namespace,
    questions: list[str],
    profiler: cProfile.Profile | None = None,
    timer: _StatementTimer | None = None,
) -> tuple[float, float, float, dict[str, list[float]]]:
    """Each question embedded alone, then recalled (under `profiler` and `timer` if given),
    alternated: (query embedding p50, recall p50, recall p95) in ms, and recall's own stage
    timings."""
    provider = get_provider()
    walls, embeds, stages = [], [], {}
    for question in questions:
        started = time.perf_counter()
        provider.embed_query(question)
        embeds.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        if profiler:
            profiler.enable()
        with connection.execute_wrapper(timer) if timer else contextlib.nullcontext():
            outcome = recall_memories(
                RecallRequest(
                    actor=ACTOR, namespace=namespace, subject_external_id=SUBJECT, query=question
                )
            )
        if profiler:
            profiler.disable()
        walls.append((time.perf_counter() - started) * 1000)
        for stage, value in outcome.timings_ms.items():
            stages.setdefault(stage, []).append(value)
    walls.sort()
    embeds.sort()
    p50, p95 = walls[len(walls) // 2], walls[int(len(walls) * 0.95)]
    return embeds[len(embeds) // 2], p50, p95, stages


def ingest_rounds(
    conversation: locomo.Conversation,
    plain: SentenceTransformer,
    texts: list[str],
    rounds: int,
    namespaces: list[Namespace],
) -> Namespace:
    """Ingest and the model alternated over `rounds`, their medians printed; each namespace
    is appended to `namespaces` (deleted at the end). Returns the last one, recalled over."""
    model_rates, ingest_rates, memory_rates = [], [], []
    for _ in range(rounds):
        model_rates.append(model_rate(plain, texts))
        seconds, (namespace, _), _ = ingest(conversation, profile=False)
        namespaces.append(namespace)
        ingest_rates.append(len(texts) / seconds)
        # Turns and the facts extracted from them: each one text embedded.
        memory_rates.append(Memory.objects.filter(namespace=namespace).count() / seconds)
    model, ingested = statistics.median(model_rates), statistics.median(ingest_rates)
    memories = statistics.median(memory_rates)
    print(f"\ningest, median of {rounds} rounds")
    print(f"  the model alone (sentence-transformers float32, batch 32) {model:7.1f} texts/s")
    print(f"  ingest through messages (extraction on, as recall_eval)  {ingested:7.1f} turns/s")
    print(f"    memories stored (turns and extracted facts)            {memories:7.1f} /s")
    print(f"  ratio, memories/s to texts/s {memories / model:.2f} (goal >= 0.80)")
    print(f"  ratio, turns/s to texts/s    {ingested / model:.2f}")
    return namespace


def print_ingest_profile(
    conversation: locomo.Conversation, top: int, namespaces: list[Namespace]
) -> None:
    """One more ingest under cProfile: its time by stage and MemoryHub's costliest functions."""
    seconds, (profiled, _), profiler = ingest(conversation, profile=True)
    namespaces.append(profiled)
    stats = pstats.Stats(profiler)  # type: ignore[arg-type]
    print(f"\ningest profile ({seconds:.2f} s under cProfile, shares of that time)")
    for label, needles in STAGES:
        part = _stage_seconds(stats, needles)
        print(f"  {label:<40} {part:6.2f} s  {part / seconds:5.1%}")
    print("  MemoryHub's own functions by cumulative time:")
    for line in _own_functions(stats, seconds, top):
        print(line)


def print_recall_goal(namespace: Namespace, questions: list[str]) -> None:
    """The goal's figures: recall and the query embedding alone, alternated, unprofiled."""
    for question in questions[:5]:
        recall_memories(
            RecallRequest(
                actor=ACTOR, namespace=namespace, subject_external_id=SUBJECT, query=question
            )
        )
    embed50, wall50, wall95, _ = timed_recalls(namespace, questions)
    print(f"\nrecall, {len(questions)} questions, k=10")
    print(f"  query embedding alone p50 {embed50:6.2f} ms")
    print(f"  recall                p50 {wall50:6.2f} ms  p95 {wall95:.2f} ms")
    print(f"  ratio {wall50 / embed50:.2f} (goal <= 2.00)")


def print_recall_profile(namespace: Namespace, questions: list[str]) -> None:
    """The same questions again, each recall under cProfile: stages, SQL, costliest functions."""
    statements: dict[str, list[float]] = {}
    recall_profile = cProfile.Profile()
    embed50, wall50, wall95, stages = timed_recalls(
        namespace, questions, recall_profile, _StatementTimer(statements)
    )
    print("\nrecall profile, the same questions again, each recall under cProfile")
    print(f"  query embedding alone p50 {embed50:6.2f} ms")
    print(f"  recall                p50 {wall50:6.2f} ms  p95 {wall95:.2f} ms")
    print("  stages (median ms; keyword runs while the query is embedded on another thread)")
    for stage, values in stages.items():
        print(f"    {stage:<12} {statistics.median(values):6.2f}")
    print("  SQL statements per recall (median ms each, by their first words):")
    for label, values in sorted(statements.items(), key=lambda item: -sum(item[1])):
        each = len(values) / len(questions)
        print(f"    {statistics.median(values):6.2f} ms  x{each:.1f}  {label}")
    print("  costliest functions by own time:")
    recall_stats = pstats.Stats(recall_profile)
    rows = sorted(
        recall_stats.stats.items(),  # type: ignore[attr-defined]
        key=lambda item: -item[1][2],
    )[:12]
    total = sum(values[2] for values in recall_stats.stats.values())  # type: ignore[attr-defined]
    for (filename, line, name), (_, calls, own, _, _) in rows:
        print(f"    {own / total:5.1%}  {calls:6d}  {Path(filename).name}:{line} {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", type=Path, default=DEFAULT_CONVERSATION)
    parser.add_argument("--recalls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--top", type=int, default=25, help="functions listed per profile")
    args = parser.parse_args()
    if not args.conversation.exists():
        sys.exit(f"No LoCoMo conversation at {args.conversation} (../shared/data is needed).")
    print(f"CPU: {cpu()}")
    conversation = locomo.read_conversation(args.conversation)
    texts = [turn.text for turn in conversation.turns]
    provider = get_provider()
    provider.embed_query("warm-up")
    provider.embed_documents(["warm-up"])
    plain = plain_model()
    print(f"embeddings: queries {provider.query_runtime}, batches {provider.batch_runtime}")  # type: ignore[attr-defined]
    print(f"conversation {conversation.name}: {len(texts)} turns")

    namespaces: list[Namespace] = []
    try:
        # Ingest and the model alternate over rounds; the last round is profiled apart.
        namespace = ingest_rounds(conversation, plain, texts, args.rounds, namespaces)
        print_ingest_profile(conversation, args.top, namespaces)
        questions = [q.question for q in conversation.questions[: args.recalls]]
        print_recall_goal(namespace, questions)
        print_recall_profile(namespace, questions)
    finally:
        for namespace in namespaces:
            namespace_delete(actor=ACTOR, namespace=namespace)


if __name__ == "__main__":
    main()
