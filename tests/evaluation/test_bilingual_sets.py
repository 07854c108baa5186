"""The bilingual recall eval sets (tests/evaluation/data/): each file is a LoCoMo-format
conversation the loader reads whole, every question's evidence is a turn of its
conversation, and each set holds the questions the sets are for (at least 40 Chinese and 20
cross- or mixed-language ones)."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest

from apps.evaluation import locomo

DATA = Path(__file__).resolve().parent / "data"
CROSS = {"en->zh", "zh->en", "mixed"}


@pytest.mark.parametrize("name", ["bilingual-dev", "bilingual-holdout"])
def test_each_set_loads_whole_with_its_questions(name: str) -> None:
    files = sorted((DATA / name).glob("*.json"))
    assert len(files) >= 4
    languages: Counter[str] = Counter()
    for path in files:
        conversation = locomo.read_conversation(path)
        raw = json.loads(path.read_text())["qa"]
        assert len(conversation.questions) == len(raw), path.name  # none left out
        turns = {turn.dia_id for turn in conversation.turns}
        for question in conversation.questions:
            assert set(question.evidence) <= turns, (path.name, question.question)
        languages.update(item["lang"] for item in raw)
    assert languages["zh"] >= 40
    assert sum(languages[case] for case in CROSS) >= 20


@pytest.mark.locomo  # a long evaluation: `make test-all`
@pytest.mark.django_db
def test_the_default_models_hold_the_floor_on_the_bilingual_tuning_sets() -> None:
    """Recall on the bilingual tuning sets (conversations; facts) with the shipped models
    (the primary and the multilingual one), by language case. An English-only model falls
    far below these floors (conversations: zh 0.73, en->zh 0.61, zh->en 0.54 recall@10:
    bench/RESULTS.md). The sets are tuned on: the figures reported are measured on the
    holdout sets."""
    from django.core.management import call_command

    from apps.memories.embeddings import set_provider
    from apps.memories.multilingual import set_multilingual_provider

    set_provider(None)  # the configured (real, offline) models, not the test embedder
    set_multilingual_provider(None, built=False)
    out = io.StringIO()
    call_command("recall_eval", str(DATA / "bilingual-dev"), "--json", stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    print(json.dumps(summary["languages"]))  # the figures, in the test log
    languages = summary["languages"]
    assert languages["zh"]["recall@10"] >= 0.88  # 0.935 measured, AMD EPYC
    assert languages["en->zh"]["recall@10"] >= 0.90  # 0.947
    assert languages["zh->en"]["recall@10"] >= 0.92  # 1.000
    assert languages["mixed"]["recall@10"] >= 0.86  # 0.913

    # Facts stored as memories, each question needing one at rank 1 (fact_eval).
    out = io.StringIO()
    call_command("fact_eval", str(DATA / "bilingual-facts-dev"), "--json", stdout=out)
    facts = json.loads(out.getvalue().strip().splitlines()[-1])
    print(json.dumps(facts))
    assert facts["zh"]["hit@1"] >= 0.65  # 0.700 measured; the primary model alone: 0.283
    assert facts["en->zh"]["hit@1"] >= 0.78  # 0.833
    assert facts["zh->en"]["hit@1"] >= 0.65  # 0.733
    assert facts["en"]["hit@1"] == 1.0
