"""The knowledge-update suite (tests/knowledge/scenarios.json) through the real write
pipeline: the offline extractor keeps each person's current facts true. The floor: at least
90% of scenarios fully right, no corrected allergy or medical fact left current, and in
every update scenario the current value ranked above the stale one (recall, portal search).
`python manage.py knowledge_eval --failures` prints the per-category table."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.evaluation.knowledge import (
    judge,
    mentions,
    read_scenarios,
    run_suite,
    summary_outcome,
    table,
)

SCENARIOS = Path(__file__).with_name("scenarios.json")
# Sets written apart, in real chat style, by authors who never saw the extractor's rules;
# they drove its development after their first run (29%, 28%, 60%, 52% and 62% right then),
# so they are regression sets now, no longer held out.
CHAT_SETS = [Path(__file__).with_name(f"chat_scenarios_{x}.json") for x in "abcde"]
# heldout_f.json to heldout_j.json, written the same way, each measured how the rules
# generalise on its first run (45%, 35%, 47.5%, 50% and 32.5% fully right); each was tuned on
# since, so none is held out any more, and none is held to the floor here. heldout_k.json was
# written apart, by an author who never saw the rules or any other set, after the last rule
# change, and is never tuned on: it measures how the rules generalise
# (`manage.py knowledge_eval tests/knowledge/heldout_k.json`); not held to a floor.
# heldout_m.json was written the same way, apart, and is never tuned on either: it is for
# comparing extractors (the rules, an LLM, both); not held to a floor.


def test_the_suite_covers_what_it_must() -> None:
    scenarios = read_scenarios(SCENARIOS)
    assert len(scenarios) >= 60
    assert len({s.id for s in scenarios}) == len(scenarios)
    languages = {s.language for s in scenarios}
    assert languages == {"en", "zh"}
    categories = {c for s in scenarios for c in s.categories}
    for needed in (
        "residence", "job", "employer", "name", "diet", "allergy", "pet", "plan",
        "preference", "relationship", "health", "correction", "negation", "third-party",
        "multi", "split", "repeat",
    ):  # fmt: skip
        assert needed in categories, needed
    assert any(len(s.requests) > 1 for s in scenarios)
    assert all(s.current or s.stale for s in scenarios)


@pytest.mark.parametrize("path", sorted(SCENARIOS.parent.glob("*.json")), ids=lambda p: p.stem)
def test_every_scenario_states_a_fact_that_must_hold_or_must_not(path: Path) -> None:
    scenarios = read_scenarios(path)
    assert scenarios
    assert [s.id for s in scenarios if not (s.current or s.stale)] == []
    assert len({s.id for s in scenarios}) == len(scenarios)


def test_judging_fails_a_missing_fact_and_a_stale_one() -> None:
    (scenario,) = [s for s in read_scenarios(SCENARIOS) if s.id == "en-compound-move"]
    right = judge(scenario, ["The user lives in Shanghai.", "The user works as a pastry chef."])
    assert right.right
    stale = judge(
        scenario, ["The user lives in Shanghai last week.", "The user works as a pastry chef."]
    )
    assert stale.kept == ["last week"]
    missing = judge(scenario, ["The user lives in Shanghai."])
    assert missing.missing == ["works as a pastry chef"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", [SCENARIOS, *CHAT_SETS], ids=lambda p: p.stem)
def test_the_offline_extractor_keeps_current_facts_true(path: Path) -> None:
    outcomes = run_suite(read_scenarios(path))
    report = "\n".join(f"{name:<20} {right}/{count}" for name, count, right in table(outcomes))
    failures = [
        f"{o.scenario.id}: missing {o.missing}, stale {o.kept}; facts {o.facts}"
        for o in outcomes
        if not o.right
    ]
    print("\n".join([report, *failures]))  # shown with -s, and on failure
    right = sum(o.right for o in outcomes)
    assert right / len(outcomes) >= 0.9, "\n".join([report, *failures])
    critical = [o.scenario.id for o in outcomes if o.scenario.critical and not o.right]
    assert critical == [], "\n".join(failures)
    # What holds ranks above what held, in recall and in the portal's search, for the topic
    # question of every update scenario whose facts are right (knowledge.ranking_problems;
    # a wrong fact is the floors' above).
    misranked = [f"{o.scenario.id}: {o.misranked}" for o in outcomes if o.right and o.misranked]
    assert misranked == []
    # What an app is told: a prompt assembled in a new session states the current value and
    # no memory states only the stale one; as of the moment before the update, recall
    # serves the stale value (knowledge.served_problems).
    served = [f"{o.scenario.id}: {o.served}" for o in outcomes if o.right and o.served]
    assert served == [], "\n".join(served)


def test_summaries_state_the_current_facts_and_no_stale_one() -> None:
    """The offline summary of each scenario's conversation (no database: it is pure)."""
    summaries = [summary_outcome(s) for s in read_scenarios(SCENARIOS)]
    wrong = [
        f"{s.outcome.scenario.id}: missing {s.outcome.missing}, stale {s.outcome.kept}: {s.summary}"
        for s in summaries
        if not s.outcome.right
    ]
    assert len(wrong) <= len(summaries) // 10, "\n".join(wrong)
    assert not [s for s in summaries if s.outcome.kept], "\n".join(wrong)  # never a stale one


def test_the_judge_matches_whole_words_and_chinese_anywhere() -> None:
    assert not mentions("The user's friend is Jackson.", "son")
    assert not mentions("The user likes steak.", "tea")
    assert mentions("The user has a son named Leo.", "son")
    assert mentions("The user likes green tea.", "Green tea")
    assert mentions("用户住在深圳南山区。", "深圳")
    assert mentions("The user drinks café au lait.", "café")
