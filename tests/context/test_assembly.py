"""Assembly as a pure function: the budget is never exceeded and the total is an exact
recount; placement; dropped items and their reasons."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from apps.context.assembly import (
    MEMORIES,
    PROCEDURAL,
    SHARED,
    SUMMARY,
    TURNS,
    BudgetTooSmall,
    Item,
    SectionSpec,
    assemble,
    place,
)
from apps.tokens.tokenizers import message_tokens, tokenizer_for

O200K = tokenizer_for("o200k_base")
texts = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=120
)


def items(section: str, values: list[tuple[str, float]]) -> list[Item]:
    role = {0: "user", 1: "assistant"}
    return [
        Item(str(i), text, value, role=role[i % 2] if section == TURNS else "")
        for i, (text, value) in enumerate(values)
    ]


section_contents = st.lists(st.tuples(texts, st.floats(0, 1)), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    system=st.text(max_size=200),
    query=texts,
    contents=st.fixed_dictionaries(
        {name: section_contents for name in (PROCEDURAL, TURNS, MEMORIES, SHARED)}
    ),
    summary=st.one_of(st.none(), texts),
    budget=st.integers(min_value=1, max_value=2000),
    caps=st.dictionaries(
        st.sampled_from([PROCEDURAL, TURNS, MEMORIES, SHARED, SUMMARY]),
        st.integers(min_value=0, max_value=400),
    ),
    placement=st.sampled_from(["edges", "ranked"]),
    encoding=st.sampled_from(["o200k_base", "cl100k_base"]),
)
@example(  # a request with room for everything: the assembled branch runs on every run
    system="You are kind.", query="What now?",
    contents={PROCEDURAL: [("Be brief.", 0.5)], TURNS: [("Hi", 0.0), ("Hello", 0.0)],
              MEMORIES: [("Likes tea", 0.9), ("Lives in Lyon", 0.4)], SHARED: [("Open 9-5", 0.3)]},
    summary="They talked about tea.", budget=2000, caps={}, placement="edges",
    encoding="o200k_base",
)  # fmt: skip
def test_the_total_never_exceeds_the_budget_and_is_an_exact_recount(
    system, query, contents, summary, budget, caps, placement, encoding
) -> None:
    tokenizer = tokenizer_for(encoding)
    candidates = {name: items(name, values) for name, values in contents.items()}
    candidates[SUMMARY] = [Item("summary", summary, 1.0)] if summary else []
    priorities = {PROCEDURAL: 90, TURNS: 80, MEMORIES: 70, SUMMARY: 60, SHARED: 50}
    specs = {name: SectionSpec(p, caps.get(name)) for name, p in priorities.items()}
    # The system prompt and the query alone: refused exactly when they do not fit.
    system_message = [{"role": "system", "content": system.strip()}] if system.strip() else []
    required = message_tokens([*system_message, {"role": "user", "content": query}], tokenizer)
    try:
        result = assemble(
            system_prompt=system, query=query, candidates=candidates, budget=budget,
            tokenizer=tokenizer, specs=specs, placement=placement,
        )  # fmt: skip
    except BudgetTooSmall as error:
        too_small = error
        assert too_small.required > budget
        assert too_small.required == required
        return
    assert required <= budget
    assert result.total_tokens <= budget
    assert result.total_tokens == message_tokens(result.messages, tokenizer)
    # Every candidate is either kept or reported dropped, exactly once.
    kept = {(s.name, i.key) for s in result.sections for i in s.items}
    dropped = {(d.section, d.key) for d in result.dropped}
    offered = {(name, i.key) for name, group in candidates.items() for i in group}
    assert kept | dropped == offered
    assert not kept & dropped
    for section in result.sections:
        cap = caps.get(section.name)
        if cap is not None:
            assert sum(section.item_tokens) <= cap


def test_the_strongest_memories_go_to_the_edges_and_the_weakest_to_the_middle() -> None:
    ranked = [Item(str(n), f"m{n}", value=1 - n / 10) for n in range(6)]  # m0 best
    assert [i.text for i in place(ranked, "edges")] == ["m0", "m2", "m4", "m5", "m3", "m1"]
    assert [i.text for i in place(ranked, "ranked")] == ["m0", "m1", "m2", "m3", "m4", "m5"]


def test_items_that_do_not_fit_are_dropped_whole_lowest_value_first_with_reasons() -> None:
    memories = items(MEMORIES, [(f"memory {n} " + "word " * 20, n / 10) for n in range(10)])
    turns = items(TURNS, [(f"turn {n} " + "chat " * 10, 0) for n in range(6)])
    specs = {MEMORIES: SectionSpec(70, None), TURNS: SectionSpec(80, 60)}
    result = assemble(
        system_prompt="You are kind.", query="What now?", budget=300, tokenizer=O200K,
        candidates={MEMORIES: memories, TURNS: turns}, specs=specs,
    )  # fmt: skip
    kept_memories = [i.key for s in result.sections if s.name == MEMORIES for i in s.items]
    dropped_memories = [d.key for d in result.dropped if d.section == MEMORIES]
    # Some of each, else the comparison below would hold vacuously.
    assert kept_memories
    assert dropped_memories
    assert all(int(k) > int(d) for k in kept_memories for d in dropped_memories)
    assert {d.reason for d in result.dropped if d.section == MEMORIES} == {"budget"}
    # Turns: the newest that fit the section cap, in order; older ones dropped for the cap.
    kept_turns = [i.key for s in result.sections if s.name == TURNS for i in s.items]
    assert kept_turns == sorted(kept_turns, key=int)
    assert kept_turns[-1] == "5"
    assert {d.reason for d in result.dropped if d.section == TURNS} == {"section_cap"}
    assert max(int(d.key) for d in result.dropped if d.section == TURNS) < int(kept_turns[0])


def test_a_budget_too_small_for_the_system_prompt_and_query_is_refused_with_numbers() -> None:
    with pytest.raises(BudgetTooSmall) as caught:
        assemble(
            system_prompt="word " * 100, query="hello?", budget=50, tokenizer=O200K,
            candidates={},
        )  # fmt: skip
    assert caught.value.budget == 50
    assert caught.value.required > 100
