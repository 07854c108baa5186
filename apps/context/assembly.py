"""Prompt assembly within an exact token budget (pure: no Django, no database).

Sections, each with a priority and an optional token cap: the system prompt and the query
(required), procedural memories (instructions), recent conversation turns, recalled personal
memories, the conversation summary, shared memories. Budget = context window - reserve.
Sections are filled in priority order, each with its most valuable items first (turns: the
newest); items are dropped whole, with their reason, and once one does not fit, every less
valuable item of its section goes too, so a weaker item never takes a stronger one's place.
The result is rendered as chat messages
and counted exactly (content, roles and the chat framing of the model family); if the exact
count exceeds the budget the least valuable kept item goes, until it fits, so the total
never exceeds the budget and always equals a recount of the messages.

Placement: recalled memories are ordered with the strongest at the start and the end of the
memory block and the weakest in the middle ("edges"), since models attend least to the
middle of a long context; "ranked" keeps them best first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.pipeline.extraction import MEMORY_BLOCK_END, MEMORY_BLOCK_START
from apps.tokens.tokenizers import TOKENS_PER_MESSAGE, Tokenizer, message_tokens

SYSTEM, QUERY = "system", "query"
PROCEDURAL, TURNS, MEMORIES, SUMMARY, SHARED = (
    "procedural",
    "turns",
    "memories",
    "summary",
    "shared",
)
DEFAULT_PRIORITIES = {PROCEDURAL: 90, TURNS: 80, MEMORIES: 70, SUMMARY: 60, SHARED: 50}
HEADERS = {
    PROCEDURAL: "## Instructions",
    SHARED: "## Shared knowledge",
    MEMORIES: "## What you remember about the user",
    SUMMARY: "## Earlier in this conversation (summary)",
}
PLACEMENTS = ("edges", "ranked")


@dataclass
class Item:
    key: str  # memory id, message position, "summary"
    text: str
    value: float  # higher is kept first
    role: str = ""  # turns: user | assistant
    line_tokens: int | None = None  # tokens of "- " + text, when counted before (at write)
    details: dict[str, Any] = field(default_factory=dict)  # e.g. recall score components


@dataclass
class SectionSpec:
    priority: int
    max_tokens: int | None = None


@dataclass
class Dropped:
    section: str
    key: str
    tokens: int
    reason: str  # budget | section_cap | window | summarized | limit


@dataclass
class SectionOut:
    name: str
    tokens: int
    items: list[Item]
    item_tokens: list[int]


@dataclass
class Assembly:
    messages: list[dict[str, str]]
    sections: list[SectionOut]
    total_tokens: int
    budget_tokens: int
    dropped: list[Dropped]


class BudgetTooSmall(Exception):
    def __init__(self, required: int, budget: int) -> None:
        super().__init__(
            f"the system prompt and query need {required} tokens; the budget is {budget}"
        )
        self.required = required
        self.budget = budget


def place(items: list[Item], placement: str) -> list[Item]:
    """Order memories for the prompt: best first ("ranked"), or strongest at both edges and
    weakest in the middle ("edges": 1st, 3rd, 5th ... then ... 6th, 4th, 2nd)."""
    ranked = sorted(items, key=lambda item: -item.value)
    if placement == "ranked":
        return ranked
    return ranked[0::2] + ranked[1::2][::-1]


def render(
    system_prompt: str, query: str, kept: dict[str, list[Item]], placement: str
) -> list[dict[str, str]]:
    parts = [system_prompt.strip()] if system_prompt.strip() else []
    if kept.get(PROCEDURAL):
        parts.append(_block(PROCEDURAL, sorted(kept[PROCEDURAL], key=lambda i: -i.value)))
    # The subject's memories open the block (its strongest first, and last), then shared ones.
    memory_blocks = []
    if kept.get(MEMORIES):
        memory_blocks.append(_block(MEMORIES, place(kept[MEMORIES], placement)))
    if kept.get(SHARED):
        memory_blocks.append(_block(SHARED, place(kept[SHARED], placement)))
    if memory_blocks:
        parts.append("\n".join([MEMORY_BLOCK_START, *memory_blocks, MEMORY_BLOCK_END]))
    if kept.get(SUMMARY):
        parts.append(f"{HEADERS[SUMMARY]}\n{kept[SUMMARY][0].text}")
    messages = [{"role": "system", "content": "\n\n".join(parts)}] if parts else []
    for turn in sorted(kept.get(TURNS, []), key=lambda i: int(i.key)):
        messages.append({"role": turn.role, "content": turn.text})
    messages.append({"role": "user", "content": query})
    return messages


def _block(section: str, items: list[Item]) -> str:
    return "\n".join([HEADERS[section], *(f"- {item.text}" for item in items)])


def assemble(
    *,
    system_prompt: str,
    query: str,
    candidates: dict[str, list[Item]],
    budget: int,
    tokenizer: Tokenizer,
    specs: dict[str, SectionSpec] | None = None,
    placement: str = "edges",
    excluded: list[Dropped] | None = None,
) -> Assembly:
    """Fill the budget; see the module docstring. `excluded` are items the strategy left out
    before assembly (reported as dropped with their reason)."""
    specs = {name: SectionSpec(p) for name, p in DEFAULT_PRIORITIES.items()} | (specs or {})
    kept: dict[str, list[Item]] = {name: [] for name in DEFAULT_PRIORITIES}
    dropped: list[Dropped] = list(excluded or [])
    base = message_tokens(render(system_prompt, query, kept, placement), tokenizer)
    if base > budget:
        raise BudgetTooSmall(base, budget)

    cost: dict[int, int] = {}  # id(item) -> its tokens as counted in its section
    used = base
    system_open = bool(system_prompt.strip())
    block_open = False
    for name in sorted(specs, key=lambda n: -specs[n].priority):
        items = candidates.get(name, [])
        if name == TURNS:
            order = sorted(items, key=lambda i: -int(i.key))  # newest first
        else:
            order = sorted(items, key=lambda i: -i.value)
        section_used = 0
        cap = specs[name].max_tokens
        # Whole items, most valuable first: once one does not fit, every less valuable one of
        # the section is dropped too (for turns: every older one), so a drop never keeps a
        # weaker item in its place.
        stopped = ""
        for item in order:
            tokens = _item_cost(name, item, tokenizer)
            if stopped:
                dropped.append(Dropped(name, item.key, tokens, stopped))
                continue
            extra = 0
            if not kept[name] and name != TURNS:
                extra = _opening_cost(
                    name, tokenizer, block_open=block_open, system_open=system_open
                )
            if cap is not None and section_used + tokens + extra > cap:
                dropped.append(Dropped(name, item.key, tokens, "section_cap"))
                stopped = "section_cap"
                continue
            if used + tokens + extra > budget:
                dropped.append(Dropped(name, item.key, tokens, "budget"))
                stopped = "budget"
                continue
            kept[name].append(item)
            cost[id(item)] = tokens
            used += tokens + extra
            section_used += tokens + extra
            if name != TURNS:
                system_open = True
                block_open = block_open or name in (SHARED, MEMORIES)

    # Exact recount; the least valuable kept item goes until the whole fits.
    messages = render(system_prompt, query, kept, placement)
    total = message_tokens(messages, tokenizer)
    while total > budget:
        victim_section, victim = _least_valuable(kept, specs)
        kept[victim_section].remove(victim)
        dropped.append(Dropped(victim_section, victim.key, cost.get(id(victim), 0), "budget"))
        messages = render(system_prompt, query, kept, placement)
        total = message_tokens(messages, tokenizer)

    sections = [SectionOut(SYSTEM, tokenizer.count(system_prompt), [], [])]
    for name in sorted(specs, key=lambda n: -specs[n].priority):
        sections.append(_section_out(name, kept[name], cost, placement))
    sections.append(SectionOut(QUERY, tokenizer.count(query), [], []))
    return Assembly(messages, sections, total, budget, dropped)


def _opening_cost(name: str, tokenizer: Tokenizer, *, block_open: bool, system_open: bool) -> int:
    """What a section's first item costs beyond itself: the section's header and the blank
    line before it, for the first memory section the block markers, and a system message of
    its own if none is open yet."""
    extra = tokenizer.count(HEADERS[name]) + 2
    if name in (SHARED, MEMORIES) and not block_open:
        extra += tokenizer.count(MEMORY_BLOCK_START + MEMORY_BLOCK_END) + 2
    if not system_open:
        extra += TOKENS_PER_MESSAGE + tokenizer.count("system")
    return extra


def _section_out(name: str, items: list[Item], cost: dict[int, int], placement: str) -> SectionOut:
    """A section as sent: memories placed, turns in conversation order, with their costs."""
    if name in (SHARED, MEMORIES):
        items = place(items, placement)
    elif name == TURNS:
        items = sorted(items, key=lambda i: int(i.key))  # in conversation order
    item_tokens = [cost[id(item)] for item in items]
    return SectionOut(name, sum(item_tokens), items, item_tokens)


def turn_cost(item: Item, tokenizer: Tokenizer) -> int:
    """Tokens a turn costs as a chat message of its own."""
    return TOKENS_PER_MESSAGE + tokenizer.count(item.role) + tokenizer.count(item.text)


def _item_cost(section: str, item: Item, tokenizer: Tokenizer) -> int:
    if section == TURNS:
        return turn_cost(item, tokenizer)
    if section == SUMMARY:
        return tokenizer.count(item.text)
    if item.line_tokens is not None:
        return item.line_tokens + 1
    return tokenizer.count(f"- {item.text}") + 1  # the line and its newline


def _least_valuable(kept: dict[str, list[Item]], specs: dict[str, SectionSpec]) -> tuple[str, Item]:
    for name in sorted(specs, key=lambda n: specs[n].priority):
        if kept[name]:
            if name == TURNS:
                return name, min(kept[name], key=lambda i: int(i.key))  # the oldest turn
            return name, min(kept[name], key=lambda i: i.value)
    raise AssertionError("nothing left to drop, yet over budget")  # base <= budget
