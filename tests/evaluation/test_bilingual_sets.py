"""The bilingual recall eval sets (tests/evaluation/data/): each file is a LoCoMo-format
conversation the loader reads whole, every question's evidence is a turn of its
conversation, and each set holds the questions the sets are for (at least 40 Chinese and 20
cross- or mixed-language ones)."""

from __future__ import annotations

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
