"""The offline session summary: current facts in clean sentences, replaced values only as
history, what happened quoted, far shorter than the session; Chinese too."""

from __future__ import annotations

from apps.pipeline.extraction import OfflineSummarizer, Turn


def summarize(*texts: str, words: int = 150) -> str:
    turns = [Turn("user", text, i) for i, text in enumerate(texts)]
    return OfflineSummarizer(words=words).summarize(turns)


def test_current_facts_with_replaced_values_as_history_and_no_concatenation() -> None:
    summary = summarize(
        "Hi, I'm Mei. I live in Hangzhou and I work as a pastry chef.",
        "I moved to Shanghai last week.",
        "I'm allergic to peanuts.",
        "Actually, I'm not allergic to peanuts, it's shellfish.",
    )
    assert summary == (
        "The user's name is Mei. The user lives in Shanghai (previously: lives in Hangzhou)."
        " The user works as a pastry chef. The user is allergic to shellfish."
    )
    assert "User:" not in summary


def test_chinese_sessions_are_summarised_in_chinese() -> None:
    summary = summarize("我住在杭州，我是一名护士。", "我上周搬到了上海。")
    assert summary == "用户住在上海（此前：住在杭州）。用户是护士。"


def test_what_happened_is_quoted_and_small_talk_left_out() -> None:
    summary = summarize(
        "Thanks!",
        "We walked along the river in Lyon for two hours.",
        "Can you suggest a restaurant?",
    )
    assert summary == 'The user said: "We walked along the river in Lyon for two hours."'


def test_a_summary_stays_a_fraction_of_a_long_session() -> None:
    filler = "We talked for a while about the weather in Lisbon and the trams there."
    texts = [f"{filler} Day {i}." for i in range(40)] + ["I work as a nurse."]
    summary = summarize(*texts)
    assert "The user works as a nurse." in summary
    assert len(summary.split()) <= sum(len(t.split()) for t in texts) // 4
