import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.evaluation import metrics
from apps.evaluation.locomo import parse_session_date, read_conversation
from apps.namespaces.models import Namespace

CONVERSATION = {
    "speaker_a": "Ana",
    "speaker_b": "Ben",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey kitten last week."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! What is its name?"},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "Her name is Pepper.",
         "blip_caption": "a photo of a small grey cat"},
    ],
    "session_2_date_time": "10:01 am on 2 June, 2023",
    "session_2": [
        {"speaker": "Ben", "dia_id": "D2:1", "text": "I started training for a marathon in Oslo."},
        {"speaker": "Ana", "dia_id": "D2:2", "text": "Good luck with the running!"},
    ],
    "qa": [
        {"question": "What is the name of Ana's kitten?", "answer": "Pepper",
         "evidence": ["D1:3"], "category": 4},
        {"question": "Where is Ben's marathon?", "answer": "Oslo", "evidence": ["D2:1"],
         "category": 1},
        {"question": "What is Ben's dog called?", "answer": "n/a", "evidence": [], "category": 5},
        {"question": "Unscorable?", "answer": "x", "evidence": [], "category": 2},
    ],
}  # fmt: skip


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(CONVERSATION))
    return path


CHATTER_PER_SESSION = 12


@pytest.fixture
def chatty_locomo_file(tmp_path: Path) -> Path:
    """The conversation with unrelated small talk after each session's turns: 29 turns, so
    that only the evidence ranked above the small talk is in the top five."""
    conversation = dict(CONVERSATION)
    for number in (1, 2):
        turns = CONVERSATION[f"session_{number}"]
        conversation[f"session_{number}"] = turns + [
            {"speaker": ("Ana", "Ben")[n % 2], "dia_id": f"D{number}:{len(turns) + n + 1}",
             "text": f"Small talk number {n} about the weather and the traffic."}
            for n in range(CHATTER_PER_SESSION)
        ]  # fmt: skip
    path = tmp_path / "chatty.json"
    path.write_text(json.dumps(conversation))
    return path


def test_it_reads_turns_questions_dates_and_captions(locomo_file: Path) -> None:
    conversation = read_conversation(locomo_file)
    assert [t.dia_id for t in conversation.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    expected = "Ana: Her name is Pepper. [shared a photo: a photo of a small grey cat]"
    assert conversation.turns[2].content == expected
    assert conversation.turns[3].position == 0
    assert conversation.turns[3].occurred_at.isoformat() == "2023-06-02T10:01:00+00:00"
    assert [q.category for q in conversation.questions] == [4, 1]
    assert [q.language for q in conversation.questions] == ["", ""]  # LoCoMo names none


def test_unreadable_session_dates_are_none() -> None:
    assert parse_session_date("sometime in spring") is None
    assert parse_session_date(None) is None


@pytest.mark.django_db(transaction=True)
def test_it_reports_every_metric_and_cleans_up(chatty_locomo_file: Path) -> None:
    before = Namespace.objects.count()
    out = io.StringIO()
    call_command("recall_eval", "--format", "locomo", str(chatty_locomo_file), "--json", stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert set(summary) >= {
        "recall@5", "recall@10", "hit@5", "hit@10", "mrr", "ndcg@10", "questions",
        "recall_p50_ms", "recall_p95_ms", "ingest_per_s",
    }  # fmt: skip
    assert summary["questions"] == 2
    # 29 turns: the evidence of each question is in the top five only if it is ranked there.
    assert summary["recall@5"] == 1.0
    assert summary["ingest_per_s"] > 0
    assert Namespace.objects.count() == before


@pytest.mark.django_db(transaction=True)
def test_it_tables_the_questions_by_their_language(tmp_path: Path) -> None:
    """A set whose questions name their language case (the bilingual sets' `lang`) gets a
    row of figures for each case."""
    conversation = json.loads(json.dumps(CONVERSATION))
    conversation["qa"][0]["lang"] = "en"
    conversation["qa"][1]["lang"] = "en->zh"
    conversation["session_2"][0]["text"] = "我开始为奥斯陆的马拉松训练了。"
    path = tmp_path / "languages.json"
    path.write_text(json.dumps(conversation))
    out = io.StringIO()
    call_command("recall_eval", str(path), "--k", "1", "5", "--json", stdout=out)
    lines = out.getvalue().strip().splitlines()
    table = json.loads(lines[-1])["languages"]
    assert set(table) == {"en", "en->zh"}
    assert table["en"]["questions"] == table["en->zh"]["questions"] == 1
    assert set(table["en"]) == {"questions", "recall@1", "recall@5", "hit@1", "hit@5", "mrr"}
    assert table["en"]["recall@5"] == 1.0  # five turns: every one is in the top five
    assert any(line.startswith("language en->zh: 1 questions, recall@1 ") for line in lines)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("threshold", [0.0, 0.35, 0.6, 1.0])
def test_its_figures_at_a_threshold_are_those_of_recall_asked_with_it(
    chatty_locomo_file: Path, threshold: float
) -> None:
    def summary(*options: str) -> dict:
        out = io.StringIO()
        call_command(
            "recall_eval", str(chatty_locomo_file), "--json", "--abstention", *options, stdout=out
        )
        return json.loads(out.getvalue().strip().splitlines()[-1])

    derived = summary("--min-relevance", str(threshold))["with_min_relevance"]
    asked = summary("--config", json.dumps({"min_relevance": threshold}))
    assert derived["recall@5"] == asked["recall@5"]
    assert derived["recall@10"] == asked["recall@10"]
    assert derived["unanswerable_empty"] == asked["unanswerable_empty"]


@pytest.mark.django_db(transaction=True)
def test_it_deletes_its_namespaces_also_on_failure(locomo_file: Path, monkeypatch) -> None:
    from apps.evaluation.management.commands import recall_eval

    def explode(*args, **kwargs):
        raise RuntimeError("recall broke")

    monkeypatch.setattr(recall_eval, "run_work", explode)
    before = Namespace.objects.count()
    with pytest.raises(RuntimeError):
        call_command("recall_eval", str(locomo_file))
    assert Namespace.objects.count() == before


def test_it_refuses_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="No LoCoMo files"):
        call_command("recall_eval", str(tmp_path / "nothing.json"))


def test_metrics_match_hand_computed_values() -> None:
    ranked = ["a", "b", "c", "d"]
    assert metrics.recall_at(ranked, {"b", "x"}, 2) == 0.5
    assert metrics.hit_at(ranked, {"d"}, 3) == 0.0
    assert metrics.reciprocal_rank(ranked, {"c"}) == pytest.approx(1 / 3)
    assert metrics.ndcg_at(ranked, {"a"}, 10) == 1.0
    assert metrics.ndcg_at(ranked, {"b"}, 10) == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert metrics.percentile([5, 1, 3, 2, 4], 0.95) == 5
    assert metrics.percentile([5, 1, 3, 2, 4], 0.5) == 3


@pytest.mark.django_db(transaction=True)
def test_it_sends_the_conversation_as_an_app_does(locomo_file: Path, monkeypatch) -> None:
    """Through the service of POST /messages: one request a session, the speaker as `name`
    and the session's date as `created_at` (what an app can send)."""
    from apps.evaluation import services

    sent = []
    real = services.messages_ingest

    def spy(**kwargs):
        sent.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(services, "messages_ingest", spy)
    out = io.StringIO()
    call_command("recall_eval", str(locomo_file), "--json", stdout=out)
    assert [call["session_external_id"] for call in sent] == ["session-1", "session-2"]
    first = sent[0]["messages"]
    assert [(m.role, m.name) for m in first] == [("user", "Ana"), ("user", "Ben"), ("user", "Ana")]
    assert first[2].content == "Her name is Pepper. [shared a photo: a photo of a small grey cat]"
    assert first[0].created_at.isoformat() == "2023-05-08T13:56:00+00:00"
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["hit@10"] == 1.0  # both questions find their turn
