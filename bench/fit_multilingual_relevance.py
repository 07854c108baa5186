"""The map of the multilingual model's cosines onto the primary model's scale, for the
relevance that abstention reads (apps/recall/relevance.py: MULTILINGUAL_COSINE_SCALE and
_SHIFT).

The answerable regression (P(the memories answer the query)) was fitted on the primary
model's cosines, on LoCoMo. Asked of a LoCoMo-format set (default: the bilingual tuning set),
the questions written in Chinese, scored by the multilingual model, are captured twice: of
their own conversation (answerable) and of every other one. Prints how the two groups'
best cosines and keyword coverage compare (whether a threshold could tell them apart), and
the shift that gives the answerable ones the median answerable logit of LoCoMo dev's
questions scored by the primary model (when ../shared/data/locomo-dev is found).

    .venv/bin/python bench/fit_multilingual_relevance.py [PATH] [--locomo DIR]

Check the result on data not fitted on: `manage.py recall_eval <holdout> --abstention
--min-relevance 0.2` (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.core.management import call_command  # noqa: E402

from apps.evaluation import locomo  # noqa: E402
from apps.memories.multilingual import is_latin_script  # noqa: E402
from apps.recall import relevance, search  # noqa: E402
from bench.machine import cpu  # noqa: E402

DEFAULT_SET = ROOT / "tests" / "evaluation" / "data" / "bilingual-dev"


def capture(
    path: Path, *, latin: bool = False, abstention: bool = True
) -> list[tuple[Any, str, float, float, int]]:
    """(namespace id, query, best cosine, best coverage, absent names) of every recall of a
    non-Latin query that the multilingual model scored throughout (`latin`: of a Latin query
    that the primary model scored throughout)."""
    records: list[tuple[Any, str, float, float, int]] = []
    asked: dict[str, Any] = {}
    relevances = search._relevances
    answerability = relevance.answerability

    def watched_relevances(query: str, candidates: Any, mask: Any, *args: Any) -> Any:
        asked.update(query=query, mask=mask, namespace=args[-1].pk)
        return relevances(query, candidates, mask, *args)

    def watched_answerability(**features: Any) -> float:
        mask = asked["mask"]
        scored_by_one = not mask.any() if latin else mask.all()
        if is_latin_script(asked["query"]) is latin and len(mask) and scored_by_one:
            vector, matched, idf = features["vector"], features["matched"], features["idf"]
            total = float(np.sum(idf))
            coverage = 0.0
            if total > 0 and matched.size:
                coverage = float(np.max((np.asarray(matched) > 0) @ idf)) / total
            records.append(
                (
                    asked["namespace"],
                    asked["query"],
                    float(np.max(vector)),
                    coverage,
                    min(int(features["absent_names"]), relevance.ANSWERABLE_ABSENT_NAMES_CAP),
                )
            )
        return answerability(**features)

    search._relevances = watched_relevances  # type: ignore[assignment]
    relevance.answerability = watched_answerability  # type: ignore[assignment]
    scale, shift = relevance.MULTILINGUAL_COSINE_SCALE, relevance.MULTILINGUAL_COSINE_SHIFT
    relevance.MULTILINGUAL_COSINE_SCALE, relevance.MULTILINGUAL_COSINE_SHIFT = 1.0, 0.0
    try:
        options = ["--abstention"] if abstention else []
        call_command("recall_eval", str(path), *options, stdout=io.StringIO())
    finally:
        search._relevances = relevances  # type: ignore[assignment]
        relevance.answerability = answerability  # type: ignore[assignment]
        relevance.MULTILINGUAL_COSINE_SCALE, relevance.MULTILINGUAL_COSINE_SHIFT = scale, shift
    return records


def fit(
    records: list[tuple[Any, str, float, float, int]], label: np.ndarray
) -> tuple[float, float]:
    """The answerable regression's cosine weight and bias refitted on `records` (its coverage
    and name terms kept), both classes weighted equally (Newton's method)."""
    cosine = np.array([r[2] for r in records])
    offset = np.array(
        [
            relevance.ANSWERABLE_COVERAGE * coverage + relevance.ANSWERABLE_ABSENT_NAME * absent
            for _, _, _, coverage, absent in records
        ]
    )
    weights = np.where(label, 0.5 / label.sum(), 0.5 / (~label).sum())
    x = np.stack([cosine, np.ones_like(cosine)], axis=1)
    theta = np.array([relevance.ANSWERABLE_COSINE, relevance.ANSWERABLE_BIAS])
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ theta + offset)))
        gradient = x.T @ (weights * (label - p))
        hessian = (x * (weights * p * (1 - p))[:, None]).T @ x
        theta = theta + np.linalg.solve(hessian, gradient)
    return float(theta[0]), float(theta[1])


def logits(records: list[tuple[Any, str, float, float, int]], shift: float = 0.0) -> np.ndarray:
    """The answerable regression's logit of each record, its cosine moved by `shift`."""
    return np.array(
        [
            relevance.ANSWERABLE_COSINE * (cosine + shift)
            + relevance.ANSWERABLE_COVERAGE * coverage
            + relevance.ANSWERABLE_ABSENT_NAME * absent
            + relevance.ANSWERABLE_BIAS
            for _, _, cosine, coverage, absent in records
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_SET)
    parser.add_argument("--locomo", type=Path, default=ROOT.parent / "shared/data/locomo-dev")
    options = parser.parse_args()
    print(f"CPU: {cpu()}")
    conversations = [locomo.read_conversation(p) for p in locomo.conversation_files([options.path])]
    records = capture(options.path)
    # recall_eval makes one namespace per conversation, in the files' order, and asks each
    # every question (each is asked some written in Chinese).
    namespaces = list(dict.fromkeys(namespace for namespace, *_ in records))
    if len(namespaces) != len(conversations):
        raise SystemExit("a conversation was asked no question written in Chinese")
    own = {
        namespace: {q.question for q in conversation.questions}
        for namespace, conversation in zip(namespaces, conversations, strict=True)
    }
    answerable = [r for r in records if r[1] in own[r[0]]]
    other = [r for r in records if r[1] not in own[r[0]]]
    print(f"{len(answerable)} answerable and {len(other)} other conversations' non-Latin questions")
    for name, group in (("answerable", answerable), ("other conversations'", other)):
        cosines = np.percentile([r[2] for r in group], [25, 50, 75])
        coverage = np.percentile([r[3] for r in group], [25, 50, 75])
        print(
            f"  {name}: best multilingual cosine quartiles {cosines.round(3).tolist()},"
            f" best coverage {coverage.round(3).tolist()}"
        )
    label = np.array([True] * len(answerable) + [False] * len(other))
    weight, bias = fit(answerable + other, label)
    print(f"refitted: cosine weight {weight:.2f}, bias {bias:.2f}; as a map:")
    print(f"  MULTILINGUAL_COSINE_SCALE = {weight / relevance.ANSWERABLE_COSINE:.3f}")
    shift = (bias - relevance.ANSWERABLE_BIAS) / relevance.ANSWERABLE_COSINE
    print(f"  MULTILINGUAL_COSINE_SHIFT = {shift:.3f}")
    if not options.locomo.is_dir():
        print(f"LoCoMo dev not found at {options.locomo}: no primary-model reference.")
        return
    reference = capture(options.locomo, latin=True, abstention=False)
    target = float(np.median(logits(reference)))
    shift = (target - float(np.median(logits(answerable)))) / relevance.ANSWERABLE_COSINE
    print(f"LoCoMo dev, primary model: {len(reference)} answerable, median logit {target:.2f}")
    print(f"matching it instead: scale 1.0, shift {shift:.3f}")


if __name__ == "__main__":
    main()
