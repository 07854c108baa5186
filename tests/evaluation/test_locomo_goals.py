"""The recall quality goal, measured on the shared LoCoMo files with the real model.

Needs ../shared/data/locomo-dev (evaluation data kept beside the project, never in it);
skips with the reason where it is absent, unless MEMORYHUB_REQUIRE_SHARED_DATA=1 (set by CI),
which makes its absence a failure.
"""

import io
import json
import os

import pytest
from django.core.management import call_command

from apps.memories.embeddings import set_provider
from apps.memories.multilingual import set_multilingual_provider
from apps.recall.relevance import DEFAULT_MIN_RELEVANCE
from tests.conftest import PROJECT_ROOT

LOCOMO_DEV = PROJECT_ROOT.parent / "shared" / "data" / "locomo-dev"


@pytest.mark.django_db
def test_recall_on_locomo_dev_meets_the_goal() -> None:
    if not LOCOMO_DEV.is_dir():
        reason = f"LoCoMo evaluation data not found at {LOCOMO_DEV}"
        if os.environ.get("MEMORYHUB_REQUIRE_SHARED_DATA") == "1":
            pytest.fail(f"{reason}, and MEMORYHUB_REQUIRE_SHARED_DATA=1 forbids skipping.")
        pytest.skip(reason)
    set_provider(None)  # the configured (real, offline) models, not the test embedder
    set_multilingual_provider(None, built=False)
    out = io.StringIO()
    call_command(
        "recall_eval", "--format", "locomo", str(LOCOMO_DEV), "--json",
        "--abstention", "--min-relevance", str(DEFAULT_MIN_RELEVANCE), stdout=out,
    )  # fmt: skip
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    print(json.dumps(summary))  # the figures, in the test log
    assert summary["questions"] == 760
    assert summary["recall@10"] >= 0.81  # 0.818 measured, AMD EPYC
    assert summary["recall@5"] >= 0.74  # 0.747
    # Abstention at the documented default: the questions of the other conversations and the
    # adversarial ones mostly get nothing, the answerable ones lose little.
    abstaining = summary["with_min_relevance"]
    assert summary["unanswerable"] > 4000
    assert summary["unanswerable_empty"] == 0.0  # without a threshold, something always comes
    assert abstaining["unanswerable_empty"] >= 0.80
    assert abstaining["recall@10"] >= summary["recall@10"] - 0.02
