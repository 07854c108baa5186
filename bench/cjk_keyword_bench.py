"""How Chinese text is cut into keyword tokens, measured on keyword search alone.

Each conversation of a LoCoMo-format set (by default the bilingual tuning set,
tests/evaluation/data/bilingual-dev) is one corpus of its user and assistant turns; every
question is ranked against it by BM25 (k1 1.2, b 0.75) over the tokens of one segmentation
of Han text, everything else tokenized as the product does (apps/memories/keyword_index):

- chars: each Han character a token (the index before jieba);
- bigrams: each pair of adjacent Han characters (and a lone character on its own);
- jieba: jieba's words (precise mode, its bundled dictionary, no HMM);
- jieba-search: jieba's search mode (words, and the dictionary words inside long ones);
- jieba+chars: jieba's words of two characters or more, and every character too.

Prints hit@1, recall@5 and recall@10 by language case (zh, en->zh, zh->en, mixed, en)
and the tokens a turn takes on average (the index's size), for each segmentation.

    .venv/bin/python bench/cjk_keyword_bench.py [PATH ...]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import jieba  # noqa: E402

from apps.evaluation import locomo  # noqa: E402
from apps.memories import keyword_index  # noqa: E402
from bench.machine import cpu  # noqa: E402

jieba.setLogLevel(60)


def han_runs_replaced(cut: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """keyword_index.tokenize with each run of Han characters cut by `cut`."""
    original = keyword_index._split

    def split(normalized: str) -> list[str]:
        tokens: list[str] = []
        run: list[str] = []
        for token in original(normalized):
            if len(token) == 1 and keyword_index._char_kind(token) == keyword_index._CJK:
                run.append(token)
                continue
            if run:
                tokens += cut("".join(run))
                run = []
            tokens.append(token)
        if run:
            tokens += cut("".join(run))
        return tokens

    def tokenize(text: str) -> list[str]:
        keyword_index._split = split  # type: ignore[assignment]
        try:
            return keyword_index.tokenize(text)
        finally:
            keyword_index._split = original

    return tokenize


def bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


SEGMENTATIONS: dict[str, Callable[[str], list[str]]] = {
    "chars": keyword_index.tokenize,
    "bigrams": han_runs_replaced(bigrams),
    "jieba": han_runs_replaced(lambda run: list(jieba.cut(run, HMM=False))),
    "jieba-search": han_runs_replaced(lambda run: list(jieba.cut_for_search(run, HMM=False))),
    "jieba+chars": han_runs_replaced(
        lambda run: [w for w in jieba.cut(run, HMM=False) if len(w) > 1] + list(run)
    ),
}


def bm25_rank(query: list[str], documents: list[list[str]]) -> list[int]:
    n = len(documents)
    average = statistics.fmean(len(d) for d in documents) or 1.0
    frequency = Counter(token for d in documents for token in set(d))
    scores = []
    for index, document in enumerate(documents):
        counts = Counter(document)
        score = 0.0
        for token in set(query):
            if token not in counts:
                continue
            idf = math.log(1 + (n - frequency[token] + 0.5) / (frequency[token] + 0.5))
            tf = counts[token]
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(document) / average))
        scores.append((score, -index))
    return [-i for _, i in sorted(scores, reverse=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "paths", nargs="*", type=Path, default=[ROOT / "tests/evaluation/data/bilingual-dev"]
    )
    options = parser.parse_args()
    files = list(locomo.conversation_files(options.paths))
    conversations = [locomo.read_conversation(path) for path in files]
    print(f"CPU: {cpu()}")
    print(f"{len(conversations)} conversations, {sum(len(c.questions) for c in conversations)} "
          f"questions ({', '.join(str(p) for p in options.paths)})")  # fmt: skip
    for name, tokenize in SEGMENTATIONS.items():
        by_language: dict[str, list[tuple[float, float, float]]] = {}
        sizes: list[int] = []
        for conversation in conversations:
            documents = [tokenize(turn.content) for turn in conversation.turns]
            sizes += [len(d) for d in documents]
            ids = [turn.dia_id for turn in conversation.turns]
            for question in conversation.questions:
                ranked = [ids[i] for i in bm25_rank(tokenize(question.question), documents)]
                evidence = set(question.evidence)
                figures = (
                    float(ranked[0] in evidence),
                    len(evidence & set(ranked[:5])) / len(evidence),
                    len(evidence & set(ranked[:10])) / len(evidence),
                )
                by_language.setdefault(question.language or "-", []).append(figures)
        print(f"\n{name}: {statistics.fmean(sizes):.1f} tokens a turn")
        for language, rows in sorted(by_language.items()):
            columns = zip(*rows, strict=True)
            hit1, recall5, recall10 = (statistics.fmean(column) for column in columns)
            print(f"  {language:>7} {len(rows):>4} questions  hit@1 {hit1:.3f}  "
                  f"recall@5 {recall5:.3f}  recall@10 {recall10:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
