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


SESSION = [
    "Hi, I'm Mei. I live in Hangzhou and I work as a pastry chef.",
    "We walked along the river in Lyon for two hours.",
    "I'm allergic to peanuts.",
    "Can you suggest a restaurant?",
    "My sister Ana is a nurse in Porto.",
    "I moved to Shanghai last week.",
    "Actually, I'm not allergic to peanuts, it's shellfish.",
    "Yesterday I baked three hundred croissants for a wedding in Suzhou.",
    "I'm not a pastry chef any more, I teach baking classes now.",
    "Last Sunday we hiked up the Yellow Mountains and watched the sunrise over the clouds.",
    "My students made forty loaves of sourdough bread in the Tuesday evening class.",
    "In April we drove along the coast from Xiamen to Quanzhou in my old Volkswagen.",
    "The wedding cake for my cousin Lin had seven tiers and two hundred sugar flowers.",
    "On Saturday morning the market in Wuzhen sold out of my green tea mooncakes before ten,"
    " and a tourist from Chile asked for the recipe.",
    "During the storm in August the power went out and we baked flatbread on the gas stove"
    " for the whole building, twenty families in all.",
    "My grandmother Zhao taught me to fold dumplings when I was six, in her kitchen in Ningbo"
    " with the window open onto the canal.",
]


def test_a_digest_extended_turn_by_turn_makes_the_summary_of_the_whole_session() -> None:
    """A session sent a turn at a time: each job extends the digest kept with the summary
    (stored as JSON) instead of reading every turn again, and says the same."""
    from apps.pipeline.extraction import SummaryDigest

    summarizer = OfflineSummarizer(words=150)
    turns = [Turn("user", text, i) for i, text in enumerate(SESSION)]
    stored = SummaryDigest().to_json()
    for end in range(1, len(turns) + 1):
        digest = SummaryDigest.from_json(stored)
        extended = summarizer.extend(digest, turns[end - 1 : end])
        assert extended == summarizer.summarize(turns[:end]), end
        stored = digest.to_json()
    # Bound by a quarter of all the turns' words (52), which no single turn's would allow.
    assert 30 < len(extended.split()) <= sum(len(text.split()) for text in SESSION) // 4
    assert "previously: lives in Hangzhou" in extended
    assert "shellfish" in extended
    assert "peanuts" not in extended
    # Two turns at a time says the same as one at a time.
    digest = SummaryDigest()
    for start in range(0, len(turns), 2):
        paired = summarizer.extend(digest, turns[start : start + 2])
    assert paired == extended
