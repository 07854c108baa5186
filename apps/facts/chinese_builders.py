"""What each Chinese rule (`chinese_rules`: ZH_RULES, ZH_REPLIES) makes of its match: its
builder returns the facts, or None to pass the clause on to the next rule (pure: no Django,
no database).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps.facts import vocabulary
from apps.facts.chinese_words import ZH_CONDITION, ZH_JOB_END
from apps.facts.grammar import ClauseState, Ending, Fact, Who, value_key


@dataclass(frozen=True)
class Said:
    """What a Chinese builder reads besides its match: whom the clause is about, the turn's
    carried state, and whether the clause corrects an earlier one."""

    who: Who
    carry: ClauseState
    correction: bool

    @property
    def p(self) -> str:
        """The slot prefix of whom the clause is about ("" for the user, "姐姐|")."""
        return self.who.prefix

    @property
    def n(self) -> str:
        """Whom the clause is about, as a statement names them ("用户", "用户的姐姐")."""
        return self.who.name

    @property
    def conf(self) -> float:
        return 0.9 if self.correction else 0.8


# --- what the clause says -------------------------------------------------------------------


def diet_doing(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}在{m.group('v')}。", f"{s.p}diet", "fact", s.conf, 0.7)]


def ends_value(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "fact", s.conf, 0.6, ends=[Ending(value=m.group("v"))])]


def pet_with_name(m: re.Match[str], s: Said) -> list[Fact] | None:
    name = m.group("name")
    text = f"{s.n}养了一只叫{name}的{m.group('species')}。"
    return [Fact(text, f"{s.p}pet:{value_key(name)}", "fact", s.conf, 0.7)]


def only_drinks(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"{s.p}opinion:{value_key(value)}"
    return [Fact(f"{s.n}喝{value}。", slot, "preference", s.conf, 0.6)]


def _has_condition(value: str, s: Said) -> list[Fact]:
    return [
        Fact(f"{s.n}患有{value}。", f"{s.p}condition:{value_key(value)}", "health", s.conf, 0.9)
    ]


def condition_alone(m: re.Match[str], s: Said) -> list[Fact] | None:
    return _has_condition(m.group("v"), s) if ZH_CONDITION.fullmatch(m.group("v")) else None


def replaced(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]


def _medication_now(value: str, s: Said) -> list[Fact]:
    """The drug taken now, instead of the ones before."""
    slot = f"{s.p}medication:{value_key(value)}"
    ends = [Ending(group=f"{s.p}medication")]
    return [Fact(f"{s.n}在服用{value}。", slot, "health", 0.9, 0.9, ends=ends)]


def medicine_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    return _medication_now(m.group("v"), s)


def preparing_exam(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}在备考{m.group('v')}。", f"{s.p}study", "fact", s.conf, 0.6)]


def lives_in_ending_plan(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    ends = [Ending(group=f"{s.p}plan", value=value)]
    return [Fact(f"{s.n}住在{value}。", f"{s.p}home", "fact", s.conf, 0.8, ends=ends)]


def no_longer_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "fact", s.conf, 0.7, ends=[Ending(value=m.group("v"))])]


def vegan(m: re.Match[str], s: Said) -> list[Fact] | None:
    text = f"{s.n}吃{'纯素' if '纯' in m.group('v') else '素'}。"
    return [Fact(text, f"{s.p}diet", "fact", s.conf, 0.8)]


def medication_switched(m: re.Match[str], s: Said) -> list[Fact] | None:
    if s.carry.replace_kind != "medical-context":
        return None
    return _medication_now(m.group("new"), s)


def pet_got(m: re.Match[str], s: Said) -> list[Fact] | None:
    """A pet got without its name yet: the next clause may name it."""
    s.carry.species = m.group("species")
    text = f"{s.n}养了一只{s.carry.species}。"
    return [Fact(text, f"{s.p}pet:{value_key(s.carry.species)}", "fact", s.conf, 0.7)]


def left_employer(m: re.Match[str], s: Said) -> list[Fact] | None:
    ends = [Ending(slot=f"{s.p}employer"), Ending(slot=f"{s.p}job")]
    return [Fact("", "", "fact", s.conf, 0.7, ends=ends)]


def allergic(m: re.Match[str], s: Said) -> list[Fact] | None:
    """An allergy; a following "不是Y" negates Y's (`ClauseState.last_group`)."""
    value = m.group("v")
    s.carry.last_group = f"{s.p}allergy"
    slot = f"{s.p}allergy:{value_key(value)}"
    return [Fact(f"{s.n}对{value}过敏。", slot, "health", s.conf, 0.95)]


def not_allergic(m: re.Match[str], s: Said) -> list[Fact] | None:
    slot = f"{s.p}allergy:{value_key(m.group('v'))}"
    return [Fact("", slot, "health", s.conf, 0.9, ends=[Ending(slot=slot)])]


def not_that_one(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.last_group:
        return None
    group, s.carry.last_group = s.carry.last_group, ""
    person, _, head = group.rpartition("|")
    slot = f"{person + '|' if person else ''}{head}:{value_key(m.group('v'))}"
    return [Fact("", slot, "health", s.conf, 0.9, ends=[Ending(slot=slot)])]


def medication_taken(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"{s.p}medication:{value_key(value)}"
    return [Fact(f"{s.n}在服用{value}。", slot, "health", s.conf, 0.9)]


def diagnosed(m: re.Match[str], s: Said) -> list[Fact] | None:
    return _has_condition(m.group("v"), s)


def nickname(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}的昵称是{m.group('v')}。", f"{s.p}nickname", "fact", s.conf, 0.7)]


def lives_in(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}住在{m.group('v')}。", f"{s.p}home", "fact", s.conf, 0.8)]


def medication_stopped(m: re.Match[str], s: Said) -> list[Fact] | None:
    """A drug stopped: a following "换成Y" is the new one (`ClauseState.replace_kind`)."""
    s.carry.replace_old, s.carry.replace_kind = m.group("v"), "medication"
    ends = [Ending(group=f"{s.p}medication", value=m.group("v")), Ending(value=m.group("v"))]
    return [Fact("", "", "health", 0.9, 0.8, ends=ends)]


def replaced_by(m: re.Match[str], s: Said) -> list[Fact] | None:
    """The new value of the one a clause before stopped or denied."""
    carry = s.carry
    if not carry.replace_old:
        return None
    old, carry.replace_old = carry.replace_old, ""
    new = m.group("new")
    if carry.replace_kind == "medication":
        carry.replace_kind = ""
        slot = f"{s.p}medication:{value_key(new)}"
        return [Fact(f"{s.n}在服用{new}。", slot, "health", 0.9, 0.9)]
    return [Fact("", "", "correction", 0.9, 0.8, replace=(old, new))]


def works_at(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}在{m.group('v')}工作。", f"{s.p}employer", "fact", s.conf, 0.75)]


def job_at(m: re.Match[str], s: Said) -> list[Fact] | None:
    text = f"{s.n}在{m.group('org')}做{m.group('job')}。"
    return [Fact(text, f"{s.p}job", "fact", s.conf, 0.75)]


def opened_shop(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}开了一家{m.group('v')}。", f"{s.p}job", "fact", s.conf, 0.7)]


def gave_up(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "preference", s.conf, 0.6, ends=[Ending(value=m.group("v"))])]


def eats(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}吃{m.group('v')}。", f"{s.p}diet", "fact", s.conf, 0.7)]


def switched_food(m: re.Match[str], s: Said) -> list[Fact] | None:
    verb = "喝" if "喝" in m.group(0)[:4] else "吃"
    value = m.group("v")
    slot = f"{s.p}opinion:{value_key(value)}"
    return [Fact(f"{s.n}{verb}{value}。", slot, "preference", s.conf, 0.6)]


def pet_named_later(m: re.Match[str], s: Said) -> list[Fact] | None:
    """The name of the pet a clause before got: it replaces the nameless one."""
    if not s.carry.species:
        return None
    species, s.carry.species = s.carry.species, ""
    name = m.group("name")
    ends = [Ending(slot=f"{s.p}pet:{value_key(species)}")]
    return [
        Fact("", "", "fact", s.conf, 0.6, ends=ends),
        Fact(
            f"{s.n}养了一只叫{name}的{species}。",
            f"{s.p}pet:{value_key(name)}",
            "fact",
            s.conf,
            0.7,
        ),
    ]


def name_corrected(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.corrected:
        return None
    s.carry.corrected = False
    return [Fact(f"{s.n}的名字是{m.group('v')}。", f"{s.p}name", "fact", 0.9, 0.9)]


def allergic_to(m: re.Match[str], s: Said) -> list[Fact] | None:
    """An allergy, or its negation: a following "是Y" is the new value (`ClauseState.negated`)."""
    value = m.group("v")
    slot = f"{s.p}allergy:{value_key(value)}"
    if m.group("neg") or m.group("neg2"):
        s.carry.negated = ("zh-allergy", s.who)
        return [Fact("", slot, "health", s.conf, 0.9, ends=[Ending(slot=slot)])]
    return [Fact(f"{s.n}对{value}过敏。", slot, "health", s.conf, 0.95)]


def allergic_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"{s.p}allergy:{value_key(value)}"
    return [Fact(f"{s.n}对{value}过敏。", slot, "health", 0.9, 0.95)]


def name(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}的名字是{m.group('v')}。", f"{s.p}name", "fact", s.conf, 0.9)]


def home_no_longer(m: re.Match[str], s: Said) -> list[Fact] | None:
    ends = [Ending(slot=f"{s.p}home", value=m.group("v"))]
    return [Fact("", f"{s.p}home", "fact", s.conf, 0.8, ends=ends)]


def job_quit(m: re.Match[str], s: Said) -> list[Fact] | None:
    statement = f"{s.n}已退休。" if "退休" in m.string else ""
    ends = [Ending(slot=f"{s.p}job"), Ending(slot=f"{s.p}employer")]
    return [Fact(statement, f"{s.p}job" if statement else "", "fact", s.conf, 0.7, ends=ends)]


def job_no_longer(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    if not ZH_JOB_END.search(value):
        return None
    ends = [Ending(group=f"{s.p}job", value=value), Ending(value=value)]
    return [Fact("", "", "fact", s.conf, 0.7, ends=ends)]


def moved_from_a_place(m: re.Match[str], s: Said) -> list[Fact] | None:
    if vocabulary.zh_place_named(m.group("old")) != m.group("old"):
        return None
    return lives_in(m, s)


def in_a_place(m: re.Match[str], s: Said) -> list[Fact] | None:
    place = m.group("place")
    if vocabulary.zh_place_named(place) != place:
        return None
    if m.group("study"):
        return [Fact(f"{s.n}在{place}{m.group('study')}。", f"{s.p}home", "fact", s.conf, 0.75)]
    return [Fact(f"{s.n}住在{place}。", f"{s.p}home", "fact", s.conf, 0.8)]


def job_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    if re.search(r"(?:素食|吃素)", value):
        return [Fact(f"{s.n}吃素。", f"{s.p}diet", "fact", s.conf, 0.8)]
    if ZH_JOB_END.search(value):
        return [Fact(f"{s.n}是{value}。", f"{s.p}job", "fact", s.conf, 0.75)]
    return None


def vegetarian(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}吃素。", f"{s.p}diet", "fact", s.conf, 0.8)]


def does_not_eat(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}不吃{m.group('v')}。", f"{s.p}diet", "fact", s.conf, 0.8)]


def pet_had(m: re.Match[str], s: Said) -> list[Fact] | None:
    species = m.group("species")
    text = f"{s.n}养了一只{species}。"
    return [Fact(text, f"{s.p}pet:{value_key(species)}", "fact", s.conf, 0.7)]


def condition_gone(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    if not ZH_CONDITION.search(value):
        return None
    ends = [
        Ending(slot=f"{s.p}condition:{value_key(value)}"),
        Ending(group=f"{s.p}condition", value=value),
    ]
    return [Fact("", "", "health", s.conf, 0.9, ends=ends)]


def condition_had(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v").rstrip("了")
    return _has_condition(value, s) if ZH_CONDITION.fullmatch(value) else None


def opinion(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    dislike = m.group("verb") in ("讨厌", "不喜欢") or bool(m.group("neg"))
    text = f"{s.n}{'不喜欢' if dislike else '喜欢'}{value}。"
    thing = re.sub(r"^(?:吃|喝|玩|看|听)", "", value)  # 喜欢吃香菜, 爱上香菜: one opinion
    return [Fact(text, f"{s.p}opinion:{value_key(thing)}", "preference", s.conf, 0.6)]


def plan_dropped(m: re.Match[str], s: Said) -> list[Fact] | None:
    ends = [Ending(group=f"{s.p}plan", value=m.group("v"))]
    return [Fact("", "", "plan", s.conf, 0.6, ends=ends)]


def plan(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    return [Fact(f"{s.n}计划{value}。", f"{s.p}plan:{value_key(value)}", "plan", 0.75, 0.6)]


def marital(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    text = f"{s.n}{value.rstrip('了')}。" if value != "单身" else f"{s.n}是单身。"
    return [Fact(text, f"{s.p}marital", "relationship", s.conf, 0.75)]


def event(m: re.Match[str], s: Said) -> list[Fact] | None:
    text = f"{s.n}{m.group(0)}。"
    return [Fact(text, f"{s.p}event:{value_key(m.group(0))}", "event", 0.8, 0.6)]


# --- replies to the clause before -----------------------------------------------------------


def reply_not_that_one(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.last_group:
        return None
    group, s.carry.last_group = s.carry.last_group, ""
    person, _, head = group.rpartition("|")
    value = value_key(m.group("v"))
    slot = f"{person}|{head}:{value}" if person else f"{head}:{value}"
    return [Fact("", slot, "health", 0.9, 0.9, ends=[Ending(slot=slot)])]


def reply_pet_given(m: re.Match[str], s: Said) -> list[Fact] | None:
    s.carry.species = m.group("species")
    text = f"用户养了一只{s.carry.species}。"
    return [Fact(text, f"pet:{value_key(s.carry.species)}", "fact", 0.8, 0.7)]


def reply_nickname(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"用户的昵称是{m.group('v')}。", "nickname", "fact", 0.8, 0.7)]


def reply_renamed(m: re.Match[str], s: Said) -> list[Fact] | None:
    """A renaming, with its new name or before it (`ClauseState.replace_old`)."""
    if m.group("new"):
        return [Fact("", "", "correction", 0.9, 0.7, replace=(m.group("old"), m.group("new")))]
    s.carry.replace_old = m.group("old")
    return []


def reply_now_called(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.replace_old:
        return None
    old, s.carry.replace_old = s.carry.replace_old, ""
    return [Fact("", "", "correction", 0.9, 0.7, replace=(old, m.group("new")))]


def reply_fine_to_eat(m: re.Match[str], s: Said) -> list[Fact] | None:
    ends = [Ending(group="allergy", value=m.group("v"))]
    return [Fact("", "", "health", 0.9, 0.9, ends=ends)]


def reply_not(m: re.Match[str], s: Said) -> list[Fact] | None:
    """A value denied alone: the next clause says what holds instead."""
    s.carry.replace_old = m.group("old")
    return []


def reply_but_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.replace_old:
        return None
    old, s.carry.replace_old = s.carry.replace_old, ""
    return [Fact("", "", "correction", 0.9, 0.8, replace=(old, m.group("new")))]


def reply_pet_died(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "fact", 0.8, 0.6, ends=[Ending(group="pet", value=m.group("v"))])]


def reply_plan_off(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "plan", 0.8, 0.6, ends=[Ending(group="plan", value=m.group("v"))])]
