"""The contract an LLM's facts keep (apps/pipeline/grounding.py), the `both` extractor
(apps/pipeline/extractors.py) and the endpoint's breaker and counters
(apps/pipeline/llm_health.py), without a model: the candidates are written here as a model
might propose them."""

from __future__ import annotations

import pytest

from apps.facts.doubt import Dispute
from apps.facts.grammar import Ending
from apps.pipeline import extraction, llm_health
from apps.pipeline.extractors import BothExtractor, unresolved_turns
from apps.pipeline.grounding import fold, grounded
from apps.pipeline.llm import BreakerOpen, LlmClient, LlmExtractor, LlmUnavailable


def fact(
    slot: str, evidence: str, value: str = "", content: str = "A fact."
) -> extraction.Candidate:
    return extraction.Candidate(
        content=content, kind="semantic", position=0, slot=slot, evidence=evidence, value=value
    )


def kept(candidate: extraction.Candidate, turn: str) -> tuple[bool, dict[str, int]]:
    result = grounded([candidate], {0: turn})
    return bool(result.candidates and result.candidates[0].content), dict(result.refused)


def test_folding_ignores_case_width_quotes_and_spaces_but_not_words() -> None:
    assert fold("I’m  Allergic\nto ＰＥＡＮＵＴＳ") == "i'm allergic to peanuts"
    assert fold("我 住在 杭州") == "我住在杭州"
    assert fold("I live in Paris") != fold("Ilive in Paris")


@pytest.mark.parametrize(
    ("candidate", "turn"),
    [
        (fact("allergy:peanut", "I'm allergic to peanuts"), "ok so I’m  allergic to PEANUTS."),
        (fact("home", "I just moved to NYC", "New York"), "I just moved to NYC!"),
        (fact("medication", "I take Tylenol", "acetaminophen"), "I take Tylenol for it."),
        (fact("job", "I work as a nurse", "nurse"), "These days I work as a nurse."),
        (fact("condition", "我有哮喘", "哮喘"), "对了，我有哮喘。"),
        (fact("home", "我住在杭州", "杭州"), "我住在杭州"),
        (fact("sister|home", "my sister lives in Paris", "Paris"), "my sister lives in Paris"),
        (
            fact("favourite colour", "my favourite colour is teal", "teal"),
            "my favourite colour is teal",
        ),
    ],
)
def test_a_grounded_fact_in_the_vocabulary_and_stated_is_kept(
    candidate: extraction.Candidate, turn: str
) -> None:
    assert kept(candidate, turn) == (True, {})


@pytest.mark.parametrize(
    ("candidate", "turn", "reason"),
    [
        (fact("allergy:peanut", ""), "I'm allergic to peanuts", "ungrounded"),
        (fact("allergy:peanut", "I'm allergic to peanuts"), "I love peanut butter", "ungrounded"),
        (fact("home", "I live in Paris"), "I live in Paris", "no_value"),
        (fact("home", "I live in Paris", "Lyon"), "I live in Paris", "value_not_in_evidence"),
        (fact("medication", "I started taking notes", "notes"), "I started taking notes",
         "off_vocabulary"),
        (fact("home", "I'm at Home Depot", "Home Depot"), "I'm at Home Depot looking for paint",
         "off_vocabulary"),
        (fact("job", "I'm a professional overthinker", "overthinker"),
         "I'm a professional overthinker", "off_vocabulary"),
        (fact("home", "I visited Paris", "Paris"), "I visited Paris last summer", "not_stated"),
        (fact("home", "My friend lives in Paris", "Paris"), "My friend lives in Paris",
         "not_stated"),
        (fact("home", "live in Tokyo", "Tokyo"), "If I could, I'd live in Tokyo", "not_stated"),
        (fact("medication", "aspirin", "aspirin"), "I read an article about aspirin",
         "not_stated"),
        (fact("allergy:peanut", "not allergic to peanuts"), "I'm not allergic to peanuts",
         "not_stated"),
        (fact("home", "我想搬到上海", "上海"), "我想搬到上海", "not_stated"),
    ],
)  # fmt: skip
def test_a_fact_the_turn_does_not_bear_out_is_refused_and_counted(
    candidate: extraction.Candidate, turn: str, reason: str
) -> None:
    assert kept(candidate, turn) == (False, {reason: 1})


def test_a_refused_fact_leaves_nothing_but_an_ending_it_grounds() -> None:
    move = fact("home", "I moved to Xyzzyville", "Xyzzyville")
    move.ends = [Ending(slot="home")]
    result = grounded([move], {0: "I moved to Xyzzyville"})
    # The new home is no known place: not stored, and its value-less ending goes with it.
    assert result.candidates == []
    assert result.refused == {"off_vocabulary": 1, "ending_ungrounded": 1}


def test_an_llm_health_ending_becomes_a_dispute_and_an_unnamed_value_is_dropped() -> None:
    negation = extraction.Candidate(
        content="",
        kind="semantic",
        position=0,
        ends=[Ending(slot="allergy:peanut"), Ending(slot="medication:warfarin")],
        disputes=[Dispute("condition", "asthma")],
    )
    result = grounded([negation], {0: "turns out I'm not allergic to peanuts"})
    (candidate,) = result.candidates
    assert candidate.ends == []
    assert candidate.disputes == [Dispute("allergy", "peanut")]
    assert result.refused == {"ending_ungrounded": 2}


def test_an_ending_of_another_slot_stays_an_ending_beside_the_fact_replacing_it() -> None:
    move = fact("home", "I moved to Lisbon", "Lisbon")
    move.ends = [Ending(slot="home")]
    (candidate,) = grounded([move], {0: "I moved to Lisbon"}).candidates
    assert (candidate.content, candidate.ends) == ("A fact.", [Ending(slot="home")])


class FakeLlm(LlmExtractor):
    """An LLM extractor whose answer is given (no endpoint): what it was asked is kept."""

    def __init__(self, found: list[extraction.Candidate]) -> None:
        super().__init__(LlmClient(base_url="http://127.0.0.1:9", model="fake"))
        self.found = found
        self.asked: list[set[int] | None] = []

    def facts(
        self, turns: list[extraction.Turn], only: set[int] | None = None
    ) -> list[extraction.Candidate]:
        self.asked.append(only)
        return self.found


def test_both_asks_the_llm_only_about_turns_with_a_change_the_rules_left_unresolved() -> None:
    turns = [
        extraction.Turn("user", "I live in Porto.", 0),
        extraction.Turn("user", "I moved to Lisbon last month.", 1),
        extraction.Turn("user", "Actually the thing with my shellfish reaction changed.", 2),
        extraction.Turn("user", "I like jazz.", 3),
    ]
    rules = extraction.OfflineExtractor().extract(turns)
    assert unresolved_turns(turns, rules) == {2}
    nothing_changed = [turns[0], turns[3]]
    llm = FakeLlm([])
    BothExtractor(llm).extract(nothing_changed)
    assert llm.asked == []  # no cue: the rules alone, no call


def test_in_both_what_the_rules_resolved_stays_whatever_the_llm_adds() -> None:
    turns = [
        extraction.Turn("user", "I moved to Lisbon last month.", 0),
        extraction.Turn("user", "Actually scratch that other thing I said.", 1),
    ]
    wrong_home = fact("home", "I moved to Lisbon", "Porto", content="The user lives in Porto.")
    ending = extraction.Candidate(
        content="", kind="semantic", position=1, ends=[Ending(slot="home")]
    )
    pet = extraction.Candidate(
        content="The user has a cat.", kind="semantic", position=1, slot="pet:cat"
    )
    llm = FakeLlm([wrong_home, ending, pet])
    candidates = BothExtractor(llm).extract(turns)
    assert llm.asked == [{1}]
    semantic = [c for c in candidates if c.kind == "semantic"]
    homes = [c.content for c in semantic if c.slot == "home"]
    assert homes == ["The user lives in Lisbon."]  # the rules' own
    # The LLM's other home and its ending of the home: dropped, the rules read the home.
    assert not any(c is wrong_home or c is ending for c in candidates)
    assert "The user has a cat." in [c.content for c in semantic]  # another slot: added


URL = "http://127.0.0.1:9/v1"


def test_the_breaker_opens_after_failures_in_a_row_and_lets_one_probe_through(
    settings, monkeypatch
) -> None:
    settings.MEMORYHUB_LLM_URL = URL
    settings.MEMORYHUB_LLM_BREAKER_FAILURES = 2
    settings.MEMORYHUB_LLM_BREAKER_COOLDOWN = 60
    clock = [1_000_000.0]
    monkeypatch.setattr(llm_health.time, "time", lambda: clock[0])
    llm_health.call_failed(URL)
    assert llm_health.breaker_allows(URL)
    assert not llm_health.breaker_status().open
    clock[0] += 5
    llm_health.call_failed(URL)
    status = llm_health.breaker_status()
    assert status.open
    assert status.failures == 2
    assert status.since is not None
    assert status.since.timestamp() == 1_000_000.0
    assert not llm_health.breaker_allows(URL)
    clock[0] += 61
    assert llm_health.breaker_allows(URL)  # the probe
    assert not llm_health.breaker_allows(URL)  # only one
    llm_health.call_failed(URL)  # the probe failed: cooling down again
    clock[0] += 30
    assert not llm_health.breaker_allows(URL)
    clock[0] += 31
    assert llm_health.breaker_allows(URL)
    llm_health.call_succeeded(URL, 0.25)
    assert llm_health.breaker_status() == llm_health.BreakerStatus(open=False)
    counts = llm_health.counters()
    assert (counts.calls, counts.failures, counts.p50_seconds) == (4, 3, 0.25)


def test_an_open_breaker_makes_no_call(settings) -> None:
    settings.MEMORYHUB_LLM_URL = URL
    settings.MEMORYHUB_LLM_BREAKER_FAILURES = 1
    settings.MEMORYHUB_LLM_RETRY_DELAY = 0
    client = LlmClient(base_url=URL, model="m", timeout=0.2, retries=1)
    with pytest.raises(LlmUnavailable):
        client.ask([{"role": "user", "content": "hi"}], str, json_output=False)
    with pytest.raises(BreakerOpen):
        client.ask([{"role": "user", "content": "hi"}], str, json_output=False)
    assert llm_health.counters().calls == 1  # one call (its retry inside), then none


def test_refusals_are_counted_by_reason(settings) -> None:
    settings.MEMORYHUB_LLM_URL = URL
    llm_health.facts_refused({"ungrounded": 2, "off_vocabulary": 1})
    llm_health.facts_refused({"ungrounded": 1})
    assert llm_health.counters().refused == {"ungrounded": 3, "off_vocabulary": 1}
