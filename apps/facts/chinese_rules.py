"""The Chinese rule tables (pure: no Django, no database): ZH_REPLIES, clauses that answer or
correct the one before ("不是X", "而是Y", "X去不成了"), read first; and ZH_RULES, what a
clause says of whom it is about once its subject is known ("[我]对花生过敏").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from apps.facts import vocabulary
from apps.facts.chinese_words import ZH_CONDITION, ZH_JOB_END, ZH_PETS
from apps.facts.grammar import ClauseState, Ending, Fact, Who, value_key
from apps.facts.table import Rule, first_facts


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


def zh_reply(clause: str, carry: ClauseState) -> list[Fact] | None:
    """The facts of the first reply rule (ZH_REPLIES) that gives any; None when none does."""
    return first_facts(ZH_REPLIES, clause, Said(Who("用户", ""), carry, False))


def zh_facts(clause: str, who: Who, carry: ClauseState, correction: bool) -> list[Fact]:
    """The facts of the first rule (ZH_RULES) that gives any for `clause`, said of `who`."""
    return first_facts(ZH_RULES, clause, Said(who, carry, correction)) or []


# --- what the clause says -------------------------------------------------------------------


def _diet_doing(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}在{m.group('v')}。", f"{s.p}diet", "fact", s.conf, 0.7)]


def _ends_value(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "fact", s.conf, 0.6, ends=[Ending(value=m.group("v"))])]


def _pet_with_name(m: re.Match[str], s: Said) -> list[Fact] | None:
    name = m.group("name")
    text = f"{s.n}养了一只叫{name}的{m.group('species')}。"
    return [Fact(text, f"{s.p}pet:{value_key(name)}", "fact", s.conf, 0.7)]


def _only_drinks(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"{s.p}opinion:{value_key(value)}"
    return [Fact(f"{s.n}喝{value}。", slot, "preference", s.conf, 0.6)]


def _has_condition(value: str, s: Said) -> list[Fact]:
    return [
        Fact(f"{s.n}患有{value}。", f"{s.p}condition:{value_key(value)}", "health", s.conf, 0.9)
    ]


def _condition_alone(m: re.Match[str], s: Said) -> list[Fact] | None:
    return _has_condition(m.group("v"), s) if ZH_CONDITION.fullmatch(m.group("v")) else None


def _replaced(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]


def _medication_now(value: str, s: Said) -> list[Fact]:
    """The drug taken now, instead of the ones before."""
    slot = f"{s.p}medication:{value_key(value)}"
    ends = [Ending(group=f"{s.p}medication")]
    return [Fact(f"{s.n}在服用{value}。", slot, "health", 0.9, 0.9, ends=ends)]


def _medicine_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    return _medication_now(m.group("v"), s)


def _preparing_exam(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}在备考{m.group('v')}。", f"{s.p}study", "fact", s.conf, 0.6)]


def _lives_in_ending_plan(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    ends = [Ending(group=f"{s.p}plan", value=value)]
    return [Fact(f"{s.n}住在{value}。", f"{s.p}home", "fact", s.conf, 0.8, ends=ends)]


def _no_longer_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "fact", s.conf, 0.7, ends=[Ending(value=m.group("v"))])]


def _vegan(m: re.Match[str], s: Said) -> list[Fact] | None:
    text = f"{s.n}吃{'纯素' if '纯' in m.group('v') else '素'}。"
    return [Fact(text, f"{s.p}diet", "fact", s.conf, 0.8)]


def _medication_switched(m: re.Match[str], s: Said) -> list[Fact] | None:
    if s.carry.replace_kind != "medical-context":
        return None
    return _medication_now(m.group("new"), s)


def _pet_got(m: re.Match[str], s: Said) -> list[Fact] | None:
    """A pet got without its name yet: the next clause may name it."""
    s.carry.species = m.group("species")
    text = f"{s.n}养了一只{s.carry.species}。"
    return [Fact(text, f"{s.p}pet:{value_key(s.carry.species)}", "fact", s.conf, 0.7)]


def _left_employer(m: re.Match[str], s: Said) -> list[Fact] | None:
    ends = [Ending(slot=f"{s.p}employer"), Ending(slot=f"{s.p}job")]
    return [Fact("", "", "fact", s.conf, 0.7, ends=ends)]


def _allergic(m: re.Match[str], s: Said) -> list[Fact] | None:
    """An allergy; a following "不是Y" negates Y's (`ClauseState.last_group`)."""
    value = m.group("v")
    s.carry.last_group = f"{s.p}allergy"
    slot = f"{s.p}allergy:{value_key(value)}"
    return [Fact(f"{s.n}对{value}过敏。", slot, "health", s.conf, 0.95)]


def _not_allergic(m: re.Match[str], s: Said) -> list[Fact] | None:
    slot = f"{s.p}allergy:{value_key(m.group('v'))}"
    return [Fact("", slot, "health", s.conf, 0.9, ends=[Ending(slot=slot)])]


def _not_that_one(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.last_group:
        return None
    group, s.carry.last_group = s.carry.last_group, ""
    person, _, head = group.rpartition("|")
    slot = f"{person + '|' if person else ''}{head}:{value_key(m.group('v'))}"
    return [Fact("", slot, "health", s.conf, 0.9, ends=[Ending(slot=slot)])]


def _medication_taken(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"{s.p}medication:{value_key(value)}"
    return [Fact(f"{s.n}在服用{value}。", slot, "health", s.conf, 0.9)]


def _diagnosed(m: re.Match[str], s: Said) -> list[Fact] | None:
    return _has_condition(m.group("v"), s)


def _nickname(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}的昵称是{m.group('v')}。", f"{s.p}nickname", "fact", s.conf, 0.7)]


def _lives_in(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}住在{m.group('v')}。", f"{s.p}home", "fact", s.conf, 0.8)]


def _medication_stopped(m: re.Match[str], s: Said) -> list[Fact] | None:
    """A drug stopped: a following "换成Y" is the new one (`ClauseState.replace_kind`)."""
    s.carry.replace_old, s.carry.replace_kind = m.group("v"), "medication"
    ends = [Ending(group=f"{s.p}medication", value=m.group("v")), Ending(value=m.group("v"))]
    return [Fact("", "", "health", 0.9, 0.8, ends=ends)]


def _replaced_by(m: re.Match[str], s: Said) -> list[Fact] | None:
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


def _works_at(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}在{m.group('v')}工作。", f"{s.p}employer", "fact", s.conf, 0.75)]


def _job_at(m: re.Match[str], s: Said) -> list[Fact] | None:
    text = f"{s.n}在{m.group('org')}做{m.group('job')}。"
    return [Fact(text, f"{s.p}job", "fact", s.conf, 0.75)]


def _opened_shop(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}开了一家{m.group('v')}。", f"{s.p}job", "fact", s.conf, 0.7)]


def _gave_up(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "preference", s.conf, 0.6, ends=[Ending(value=m.group("v"))])]


def _eats(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}吃{m.group('v')}。", f"{s.p}diet", "fact", s.conf, 0.7)]


def _switched_food(m: re.Match[str], s: Said) -> list[Fact] | None:
    verb = "喝" if "喝" in m.group(0)[:4] else "吃"
    value = m.group("v")
    slot = f"{s.p}opinion:{value_key(value)}"
    return [Fact(f"{s.n}{verb}{value}。", slot, "preference", s.conf, 0.6)]


def _pet_named_later(m: re.Match[str], s: Said) -> list[Fact] | None:
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


def _name_corrected(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.corrected:
        return None
    s.carry.corrected = False
    return [Fact(f"{s.n}的名字是{m.group('v')}。", f"{s.p}name", "fact", 0.9, 0.9)]


def _allergic_to(m: re.Match[str], s: Said) -> list[Fact] | None:
    """An allergy, or its negation: a following "是Y" is the new value (`ClauseState.negated`)."""
    value = m.group("v")
    slot = f"{s.p}allergy:{value_key(value)}"
    if m.group("neg") or m.group("neg2"):
        s.carry.negated = ("zh-allergy", s.who)
        return [Fact("", slot, "health", s.conf, 0.9, ends=[Ending(slot=slot)])]
    return [Fact(f"{s.n}对{value}过敏。", slot, "health", s.conf, 0.95)]


def _allergic_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    slot = f"{s.p}allergy:{value_key(value)}"
    return [Fact(f"{s.n}对{value}过敏。", slot, "health", 0.9, 0.95)]


def _name(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}的名字是{m.group('v')}。", f"{s.p}name", "fact", s.conf, 0.9)]


def _home_no_longer(m: re.Match[str], s: Said) -> list[Fact] | None:
    ends = [Ending(slot=f"{s.p}home", value=m.group("v"))]
    return [Fact("", f"{s.p}home", "fact", s.conf, 0.8, ends=ends)]


def _job_quit(m: re.Match[str], s: Said) -> list[Fact] | None:
    statement = f"{s.n}已退休。" if "退休" in m.string else ""
    ends = [Ending(slot=f"{s.p}job"), Ending(slot=f"{s.p}employer")]
    return [Fact(statement, f"{s.p}job" if statement else "", "fact", s.conf, 0.7, ends=ends)]


def _job_no_longer(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    if not ZH_JOB_END.search(value):
        return None
    ends = [Ending(group=f"{s.p}job", value=value), Ending(value=value)]
    return [Fact("", "", "fact", s.conf, 0.7, ends=ends)]


def _moved_from_a_place(m: re.Match[str], s: Said) -> list[Fact] | None:
    if vocabulary.zh_place_named(m.group("old")) != m.group("old"):
        return None
    return _lives_in(m, s)


def _in_a_place(m: re.Match[str], s: Said) -> list[Fact] | None:
    place = m.group("place")
    if vocabulary.zh_place_named(place) != place:
        return None
    if m.group("study"):
        return [Fact(f"{s.n}在{place}{m.group('study')}。", f"{s.p}home", "fact", s.conf, 0.75)]
    return [Fact(f"{s.n}住在{place}。", f"{s.p}home", "fact", s.conf, 0.8)]


def _job_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    if re.search(r"(?:素食|吃素)", value):
        return [Fact(f"{s.n}吃素。", f"{s.p}diet", "fact", s.conf, 0.8)]
    if ZH_JOB_END.search(value):
        return [Fact(f"{s.n}是{value}。", f"{s.p}job", "fact", s.conf, 0.75)]
    return None


def _vegetarian(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}吃素。", f"{s.p}diet", "fact", s.conf, 0.8)]


def _does_not_eat(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"{s.n}不吃{m.group('v')}。", f"{s.p}diet", "fact", s.conf, 0.8)]


def _pet_had(m: re.Match[str], s: Said) -> list[Fact] | None:
    species = m.group("species")
    text = f"{s.n}养了一只{species}。"
    return [Fact(text, f"{s.p}pet:{value_key(species)}", "fact", s.conf, 0.7)]


def _condition_gone(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    if not ZH_CONDITION.search(value):
        return None
    ends = [
        Ending(slot=f"{s.p}condition:{value_key(value)}"),
        Ending(group=f"{s.p}condition", value=value),
    ]
    return [Fact("", "", "health", s.conf, 0.9, ends=ends)]


def _condition_had(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v").rstrip("了")
    return _has_condition(value, s) if ZH_CONDITION.fullmatch(value) else None


def _opinion(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    dislike = m.group("verb") in ("讨厌", "不喜欢") or bool(m.group("neg"))
    text = f"{s.n}{'不喜欢' if dislike else '喜欢'}{value}。"
    thing = re.sub(r"^(?:吃|喝|玩|看|听)", "", value)  # 喜欢吃香菜, 爱上香菜: one opinion
    return [Fact(text, f"{s.p}opinion:{value_key(thing)}", "preference", s.conf, 0.6)]


def _plan_dropped(m: re.Match[str], s: Said) -> list[Fact] | None:
    ends = [Ending(group=f"{s.p}plan", value=m.group("v"))]
    return [Fact("", "", "plan", s.conf, 0.6, ends=ends)]


def _plan(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    return [Fact(f"{s.n}计划{value}。", f"{s.p}plan:{value_key(value)}", "plan", 0.75, 0.6)]


def _marital(m: re.Match[str], s: Said) -> list[Fact] | None:
    value = m.group("v")
    text = f"{s.n}{value.rstrip('了')}。" if value != "单身" else f"{s.n}是单身。"
    return [Fact(text, f"{s.p}marital", "relationship", s.conf, 0.75)]


def _event(m: re.Match[str], s: Said) -> list[Fact] | None:
    text = f"{s.n}{m.group(0)}。"
    return [Fact(text, f"{s.p}event:{value_key(m.group(0))}", "event", 0.8, 0.6)]


# --- replies to the clause before -----------------------------------------------------------


def _reply_not_that_one(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.last_group:
        return None
    group, s.carry.last_group = s.carry.last_group, ""
    person, _, head = group.rpartition("|")
    value = value_key(m.group("v"))
    slot = f"{person}|{head}:{value}" if person else f"{head}:{value}"
    return [Fact("", slot, "health", 0.9, 0.9, ends=[Ending(slot=slot)])]


def _reply_pet_given(m: re.Match[str], s: Said) -> list[Fact] | None:
    s.carry.species = m.group("species")
    text = f"用户养了一只{s.carry.species}。"
    return [Fact(text, f"pet:{value_key(s.carry.species)}", "fact", 0.8, 0.7)]


def _reply_nickname(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact(f"用户的昵称是{m.group('v')}。", "nickname", "fact", 0.8, 0.7)]


def _reply_renamed(m: re.Match[str], s: Said) -> list[Fact] | None:
    """A renaming, with its new name or before it (`ClauseState.replace_old`)."""
    if m.group("new"):
        return [Fact("", "", "correction", 0.9, 0.7, replace=(m.group("old"), m.group("new")))]
    s.carry.replace_old = m.group("old")
    return []


def _reply_now_called(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.replace_old:
        return None
    old, s.carry.replace_old = s.carry.replace_old, ""
    return [Fact("", "", "correction", 0.9, 0.7, replace=(old, m.group("new")))]


def _reply_fine_to_eat(m: re.Match[str], s: Said) -> list[Fact] | None:
    ends = [Ending(group="allergy", value=m.group("v"))]
    return [Fact("", "", "health", 0.9, 0.9, ends=ends)]


def _reply_not(m: re.Match[str], s: Said) -> list[Fact] | None:
    """A value denied alone: the next clause says what holds instead."""
    s.carry.replace_old = m.group("old")
    return []


def _reply_but_is(m: re.Match[str], s: Said) -> list[Fact] | None:
    if not s.carry.replace_old:
        return None
    old, s.carry.replace_old = s.carry.replace_old, ""
    return [Fact("", "", "correction", 0.9, 0.8, replace=(old, m.group("new")))]


def _reply_pet_died(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "fact", 0.8, 0.6, ends=[Ending(group="pet", value=m.group("v"))])]


def _reply_plan_off(m: re.Match[str], s: Said) -> list[Fact] | None:
    return [Fact("", "", "plan", 0.8, 0.6, ends=[Ending(group="plan", value=m.group("v"))])]


def _rule(
    name: str,
    slot: str,
    builder: Callable[[re.Match[str], Said], list[Fact] | None],
    note: str,
    pattern: str | re.Pattern[str],
    *,
    anywhere: bool = False,
) -> Rule[Said]:
    return Rule(name, re.compile(pattern), slot, builder, "zh", note, anywhere)


# "(从)成都搬到了昆明": a move from a known place.
_ZH_MOVED_FROM = re.compile(
    r"^(?P<old>[^，,。住]{2,6}?)(?:搬到了|搬到|搬去了|搬去)(?P<v>[^，,。]+?)(?:了|住)?$"
)
# Where one studies or is, in a known place ("在南京读研", "现在还在长沙"):
# `vocabulary.zh_place_named` decides what a place is ("在公司" names none).
_ZH_IN_PLACE = re.compile(
    r"^(?:现在)?(?:还|仍然|依然|一直)?在(?P<place>[\u4e00-\u9fff]{2,5}?)"
    r"(?:(?P<study>读研|读博|读书|上学|上大学|读大学|念书)|(?:呢|啊|呀)?$)"
)
# A drug's name by its ending ("二甲双胍", "氨氯地平", "布洛芬片").
_ZH_DRUG = r"[\u4e00-\u9fff]{2,8}?(?:平|坦|林|素|酮|胺|醇|尔|利|汀|胍|片|胶囊|药|乐|唑|星|宁|韦)"
_ZH_PET_COUNT = "(?:一只|一条|只|条)"

# In order: the first rule whose pattern matches and whose builder gives facts wins.
ZH_RULES: tuple[Rule[Said], ...] = (
    _rule(
        "zh-diet-doing",
        "diet",
        _diet_doing,
        "A diet kept to: 在生酮, 在减肥.",
        r"^在(?P<v>生酮|节食|减肥|戒糖|断食|控糖)",
    ),
    _rule(
        "zh-stopped",
        "any",
        _ends_value,
        "Something stopped ends the facts that speak of it: 把咖啡停了.",
        r"^(?:把|将)?(?P<v>[^我你把将，,。]{1,6}?)停(?:掉)?了$",
    ),
    _rule(
        "zh-pet-called",
        "pet",
        _pet_with_name,
        "A pet and its name: 家狗叫豆豆.",
        rf"^(?:家)?(?P<species>{ZH_PETS})(?:叫|名叫)(?P<name>[^，,。]{{1,6}})$",
    ),
    _rule(
        "zh-only-drinks",
        "opinion",
        _only_drinks,
        "What one only drinks now is liked: 现在只喝美式了.",
        r"^(?:现在)?(?:只|都|就)喝(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-condition-alone",
        "condition",
        _condition_alone,
        "A known condition said on its own: 体检说我贫血.",
        r"^(?P<v>(?![有得患没])[^，,。]{1,6}?)$",
    ),
    _rule(
        "zh-is-not",
        "correction",
        _replaced,
        "A value corrected in place: 是杭州不是苏州.",
        r"^是(?P<new>[^，,。不]{1,8})(?:而)?不是(?P<old>[^，,。]{1,8})$",
    ),
    _rule(
        "zh-medicine-is",
        "medication",
        _medicine_is,
        "The drug taken now, instead of the ones before: 吃的药换成了氨氯地平.",
        r"^吃的(?:药)?(?:是|换成了?)(?P<v>[^，,。]{2,8})$",
    ),
    _rule(
        "zh-preparing-exam",
        "study",
        _preparing_exam,
        "An exam prepared for: 在家全职备考研究生.",
        r"^(?:在家)?(?:全职)?(?:备考|考)(?P<v>[^，,。]{2,8})$",
    ),
    _rule(
        "zh-lives-short",
        "home",
        _lives_in_ending_plan,
        "Where one lives, which a planned move there ends: 住在杭州了.",
        r"^(?:开始)?住(?:在)?(?P<v>[^，,。了]{2,6})(?:了)?$",
    ),
    _rule(
        "zh-no-longer-is",
        "any",
        _no_longer_is,
        "What one no longer is ends the facts that speak of it: 已经不是老师了.",
        r"^(?:现在)?(?:不再是|不是|已经不是)(?P<v>[^，,。]{1,6}?)了$",
    ),
    _rule(
        "zh-vegan",
        "diet",
        _vegan,
        "A vegetarian or vegan diet said as what one is: 是纯素的.",
        r"^(?:是)?(?P<v>纯素|吃素|素食者|素食主义者)(?:的)?$",
    ),
    _rule(
        "zh-medication-switched",
        "medication",
        _medication_switched,
        "After a doctor or a drug was mentioned, a switch is to a new drug: 给我换成了阿托伐他汀.",
        r"^(?:给我|帮我)?(?:换成|改成|换了|改用|改吃)(?:了)?(?P<new>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-pet-adopted",
        "pet",
        _pet_got,
        "A pet adopted or bought, its name perhaps in the next clause: 领养了一只猫.",
        rf"^(?:又)?(?:捡了|领养了|收养了|买了|养了){_ZH_PET_COUNT}(?P<species>{ZH_PETS})$",
    ),
    _rule(
        "zh-left-employer",
        "employer",
        _left_employer,
        "Leaving a place of work ends the employer and the job: 从腾讯离职了.",
        r"^从(?P<v>[^，,。]+?)(?:离职|辞职|退休)了?",
    ),
    _rule(
        "zh-allergen-is",
        "allergy",
        _allergic,
        "The allergen named as such: 过敏源其实是花生.",
        r"^(?:过敏的|过敏源)(?:其实)?是(?P<v>[^，,。]+?)$",
    ),
    _rule(
        "zh-not-allergic",
        "allergy",
        _not_allergic,
        "An allergy denied: 不是芒果过敏.",
        r"^(?:不是|没有|并不是)(?P<v>[^对，,。]{1,6}?)过敏$",
    ),
    _rule(
        "zh-allergic-short",
        "allergy",
        _allergic,
        "An allergy said short: 花生过敏.",
        r"^(?:是)?(?P<v>[^对不，,。是]{1,6}?)过敏$",
    ),
    _rule(
        "zh-not-that-one",
        "allergy",
        _not_that_one,
        "After an allergy, the one it is not ends: 过敏的是花生，不是芒果.",
        r"^(?:不是|而不是)(?P<v>[^，,。]{1,6})$",
    ),
    _rule(
        "zh-medication-taken",
        "medication",
        _medication_taken,
        "A drug taken, by its name's ending, and what for: 每天吃二甲双胍控制血糖.",
        rf"^(?:一直|每天|长期|还在|正在)?(?:在)?(?:吃|服用|服)(?P<v>{_ZH_DRUG})"
        r"(?:来)?(?:(?:控制|治疗|降|调理|稳定|预防)[\u4e00-\u9fff]{1,6})?$",
    ),
    _rule(
        "zh-diagnosed",
        "condition",
        _diagnosed,
        "A condition found or diagnosed: 体检查出了高血压.",
        r"^(?:体检)?(?:查出|检查出|确诊|诊断出|查出来)(?:了|有)?(?P<v>[^，,。]+?)$",
    ),
    _rule(
        "zh-nickname",
        "nickname",
        _nickname,
        "What others call one: 朋友都叫我小雨.",
        r"^(?:朋友|大家|别人|他们|家里人)(?:都)?(?:叫|喊)我(?P<v>[^，,。]{1,4})$",
    ),
    _rule(
        "zh-moved-back",
        "home",
        _lives_in,
        "A move back home: 搬回老家成都了.",
        r"^搬回(?:了)?(?:老家)?(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-pet-given",
        "pet",
        _pet_got,
        "A pet given to one, its name perhaps in the next clause: 朋友送了我一只猫.",
        rf"^(?:朋友|别人|家里)?送了我{_ZH_PET_COUNT}(?P<species>{ZH_PETS})$",
    ),
    _rule(
        "zh-medication-stopped",
        "medication",
        _medication_stopped,
        "A drug stopped; a following 换成 names the new one: 停了阿司匹林.",
        r"^(?:停了|停用了|不吃了|不再吃|停掉了)(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-replaced-by",
        "correction",
        _replaced_by,
        "The new value of one a clause before stopped or denied: 换成了布洛芬.",
        r"^(?:换成|改成|换了|改用|改吃)(?:了)?(?P<new>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-employer-joined",
        "employer",
        _works_at,
        "A new employer joined: 跳槽到字节了.",
        r"^(?:跳槽到|跳槽去|跳到|入职|加入)(?:了)?(?P<v>[^，,。]+?)(?:工作|上班)?了?$",
    ),
    _rule(
        "zh-job-at",
        "job",
        _job_at,
        "A job at a place: 在医院当护士.",
        r"^在(?P<org>(?!家|宿舍|厨房|路上|外面|这|那)[^，,。]{1,12}?)(?:做|当|开)"
        r"(?P<job>[^，,。]{1,10}?)(?:的)?$",
    ),
    _rule(
        "zh-opened-shop",
        "job",
        _opened_shop,
        "A business one opened: 自己开了一家咖啡店.",
        r"^(?:自己)?开了(?:一)?(?:家|个|间)(?P<v>[^，,。]+?)$",
    ),
    _rule(
        "zh-gave-up",
        "any",
        _gave_up,
        "A habit given up ends the facts that speak of it: 戒了咖啡.",
        r"^(?:戒了|戒掉了|戒)(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-eats-again",
        "diet",
        _eats,
        "A food group eaten again: 又开始吃肉了.",
        r"^(?:开始|又开始|重新)吃(?P<v>肉|鱼|海鲜|鸡肉|猪肉|牛肉|羊肉|鸡蛋|蛋|荤)了?$",
    ),
    _rule(
        "zh-pet-named-called",
        "pet",
        _pet_with_name,
        "A pet with its name before it: 养了一只叫豆豆的柯基.",
        rf"^养了?{_ZH_PET_COUNT}叫(?P<name>[^，,。的]{{1,6}})的(?P<species>{ZH_PETS})$",
    ),
    _rule(
        "zh-switched-food",
        "opinion",
        _switched_food,
        "A drink or food switched to is liked: 改喝燕麦奶了.",
        r"^(?:改喝|改吃|改成喝|改成吃|开始喝|开始吃)(?:了)?(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-pet-started",
        "pet",
        _pet_got,
        "A pet one started keeping, its name perhaps in the next clause: 开始养猫了.",
        rf"^(?:开始)?养(?:了)?(?:一只|一条|只|条|个)?(?P<species>{ZH_PETS})了?$",
    ),
    _rule(
        "zh-pet-named-later",
        "pet",
        _pet_named_later,
        "The name of the pet a clause before got: 给它取名叫年糕.",
        r"^(?:我)?(?:给它|给他|给她)?(?:叫|名叫|取名叫?|起名叫?|名字叫)(?P<name>[^，,。]{1,6})$",
    ),
    _rule(
        "zh-name-corrected",
        "name",
        _name_corrected,
        "After a clause that only said it was wrong, the name meant: 打错了，应该是李娜.",
        r"^(?:应该)?是(?P<v>[\u4e00-\u9fff]{2,3})$",
    ),
    _rule(
        "zh-allergic-to",
        "allergy",
        _allergic_to,
        "An allergy, or its negation: 对花生过敏, 不对芒果过敏.",
        r"^(?:(?P<neg>不|并不|其实不|没有)对|对)(?P<v>.+?)(?P<neg2>不)?过敏",
    ),
    _rule(
        "zh-allergic-is",
        "allergy",
        _allergic_is,
        "The allergy after a negated one: 是对虾过敏.",
        r"^(?:是对|是)(?P<v>.+?)过敏",
    ),
    _rule(
        "zh-name",
        "name",
        _name,
        "One's name: 叫王磊, 名字是李娜.",
        r"^(?:叫|名叫|的名字是|名字叫|名字是|全名叫|全名是|大名叫|本名叫)(?P<v>[^\s，,。]{1,12})",
    ),
    _rule(
        "zh-home",
        "home",
        _lives_in,
        "Where one lives or moved to: 住在上海, 搬到了杭州.",
        r"^(?:现在|已经)?(?:住在|搬到了|搬到|搬去了|搬去|定居在|生活在)(?P<v>[^，,。]+?)(?:了|住|生活)?$",
    ),
    _rule(
        "zh-home-lived-for",
        "home",
        _lives_in,
        "Where one has lived (for so long) is where one lives: 在成都住了五年了.",
        r"^(?:一直|现在)?在(?P<v>[^，,。\s]{2,12}?)(?:住了|生活了)[^，,。]{0,8}$",
    ),
    _rule(
        "zh-home-no-longer",
        "home",
        _home_no_longer,
        "A place one no longer lives in: 不再住在北京了.",
        r"^(?:不再|已经不)(?:住在)(?P<v>.+?)了?$",
    ),
    _rule(
        "zh-job-quit",
        "job",
        _job_quit,
        "Quitting, losing or retiring from work ends the job and the employer: 辞职了, 退休了.",
        r"^(?:辞职了|辞职|失业了|退休了|被裁员了|离职了)",
    ),
    _rule(
        "zh-job-no-longer",
        "job",
        _job_no_longer,
        "A job title no longer held ends the job: 不当老师了.",
        r"^(?:不再|不)(?:当|做|是)(?P<v>.+?)了?$",
    ),
    _rule(
        "zh-works-at",
        "employer",
        _works_at,
        "Where one works: 在腾讯工作.",
        r"^(?:可惜)?(?:现在)?(?:还|仍然|依然|一直)?(?:得|要)?在(?P<v>.+?)(?:工作|上班)",
    ),
    _rule(
        "zh-moved-from",
        "home",
        _moved_from_a_place,
        "A move from a known place to another: 成都搬到了昆明.",
        _ZH_MOVED_FROM,
    ),
    _rule(
        "zh-in-a-place",
        "home",
        _in_a_place,
        "Being or studying in a known place: 现在还在长沙, 在南京读研.",
        _ZH_IN_PLACE,
    ),
    _rule(
        "zh-job-is",
        "job",
        _job_is,
        "A job title one is or took up (or a vegetarian diet): 现在是摄影师.",
        r"^(?:现在)?(?:转行|改行|开始)?(?:是|当|做)(?:了)?(?:一名|一个|一位|名|个)?"
        r"(?P<v>[^，,。]{1,12}?)(?:了|的)?(?:就是.*)?$",
    ),
    _rule(
        "zh-vegetarian",
        "diet",
        _vegetarian,
        "A vegetarian diet: 现在吃素.",
        r"^(?:现在)?(?:吃素|只吃素|是素食者|是素食主义者)",
    ),
    _rule(
        "zh-does-not-eat",
        "diet",
        _does_not_eat,
        "A food not eaten: 不吃牛肉了.",
        r"^(?:不再|不|已经不|戒了)吃(?P<v>[^，,。了]+)了?",
    ),
    _rule(
        "zh-pet-with-name",
        "pet",
        _pet_with_name,
        "A pet had and its name: 养了一只猫，叫咪咪.",
        rf"^(?:养了|养|有)(?:一只|一条|两只|只|条|一个)?(?P<species>{ZH_PETS})[，,]?(?:叫"
        r"|名叫|名字叫)(?P<name>[^\s，,。]+)",
    ),
    _rule(
        "zh-pet-had",
        "pet",
        _pet_had,
        "A pet had: 养了一只柯基.",
        rf"^(?:养了|养|有)(?:一只|一条|两只|只|条)(?P<species>{ZH_PETS})",
    ),
    _rule(
        "zh-condition-gone",
        "condition",
        _condition_gone,
        "A condition no longer had: 已经没有哮喘了.",
        r"^(?:没有|不再有|已经没有)(?P<v>.+?)了?$",
    ),
    _rule(
        "zh-condition-had",
        "condition",
        _condition_had,
        "A known condition had: 有高血压, 得了糖尿病.",
        r"^(?:有|得了|患有|被诊断出)(?P<v>.+)$",
    ),
    _rule(
        "zh-opinion",
        "opinion",
        _opinion,
        "A liking or a dislike: 喜欢爬山, 讨厌香菜.",
        r"^(?P<neg>不再|不)?(?:越来越|突然|很|非常|特别|也|还挺|还|超|超级|最|真的|好|挺|蛮)?"
        r"(?P<verb>喜欢上了|喜欢上|爱上了|爱上|喜欢|爱|热爱|讨厌|不喜欢)"
        r"(?P<v>[^，,。]+?)(?:了|的)?$",
    ),
    _rule(
        "zh-plan-dropped",
        "plan",
        _plan_dropped,
        "A plan given up ends: 不去西安了.",
        r"^(?:不去|不打算去|取消了)(?P<v>.+?)了?$",
    ),
    _rule(
        "zh-plan",
        "plan",
        _plan,
        "A plan: 打算下个月去日本.",
        r"^(?:打算|计划|准备|要|将要|想要|会)(?P<v>.{2,})$",
    ),
    _rule(
        "zh-marital",
        "marital",
        _marital,
        "A marital status: 结婚了, 单身.",
        r"^(?:是)?(?:已经)?(?P<v>结婚了?|离婚了?|订婚了?|单身|已婚)",
    ),
    _rule(
        "zh-event",
        "event",
        _event,
        "Something done or that happened: 去了日本, 毕业了.",
        r"^(?:去了|去过|参加了|看了|买了|完成了|毕业了)(?P<v>.*)$",
    ),
)

# In order, before a clause's subject is looked for: the first that gives facts wins.
ZH_REPLIES: tuple[Rule[Said], ...] = (
    _rule(
        "zh-reply-not-but",
        "correction",
        _replaced,
        "A value corrected by what it is not and what it is: 不是芒果，是菠萝.",
        r"^(?:其实|而)?不是(?P<old>[^，,。]+?)[，,]?(?:而)?是(?P<new>[^，,。]+)$",
    ),
    _rule(
        "zh-reply-not-that-one",
        "allergy",
        _reply_not_that_one,
        "After an allergy, the one it is not ends: 而不是芒果.",
        r"^(?:而)?不是(?P<v>[^，,。]{1,6})$",
    ),
    _rule(
        "zh-reply-pet-given",
        "pet",
        _reply_pet_given,
        "A pet given to the user, its name perhaps in the next clause: 家里人送了我一只猫.",
        rf"^(?:朋友|别人|家里人?)?送了我{_ZH_PET_COUNT}(?P<species>{ZH_PETS})$",
    ),
    _rule(
        "zh-reply-call-me",
        "nickname",
        _reply_nickname,
        "What the user asks to be called: 叫我小雨就行.",
        r"^(?:你)?(?:叫|喊)我(?P<v>[^，,。就吧]{1,4})(?:就行|就好|就可以|吧)?",
    ),
    _rule(
        "zh-reply-renamed",
        "correction",
        _reply_renamed,
        "A renaming, with the new name or before it: 豆豆改名叫可乐了.",
        r"^(?P<old>[^我你，,。]{1,6}?)改名(?:了|字了)?(?:叫(?P<new>[^，,。]{1,6}))?$",
    ),
    _rule(
        "zh-reply-now-called",
        "correction",
        _reply_now_called,
        "After a renaming, the new name: 现在它叫可乐.",
        r"^(?:现在)?(?:它|他|她)(?:叫|改叫)(?P<new>[^，,。]{1,6})$",
    ),
    _rule(
        "zh-reply-nickname",
        "nickname",
        _reply_nickname,
        "What others call the user: 大家都叫我小雨.",
        r"^(?:朋友|大家|别人|他们|家里人)(?:都)?(?:叫|喊)我(?P<v>[^，,。]{1,4})$",
    ),
    _rule(
        "zh-reply-from-to",
        "correction",
        _replaced,
        "A value changed from one to another, anywhere in the clause: 从拿铁换成了美式.",
        r"从(?P<old>[^，,。从]{1,8}?)(?:换成|改成|换为|改为)(?:了)?(?P<new>[^，,。]{1,8}?)了?$",
        anywhere=True,
    ),
    _rule(
        "zh-reply-fine-to-eat",
        "allergy",
        _reply_fine_to_eat,
        "A food said to be fine ends an allergy to it: 芒果没问题.",
        r"^(?P<v>[^我你，,。]{1,6}?)(?:没问题|可以吃|我可以吃|吃没事|我吃没事|没事)$",
    ),
    _rule(
        "zh-reply-ba-to",
        "correction",
        _replaced,
        "A value changed to another, anywhere in the clause: 把布洛芬换成了对乙酰氨基酚.",
        r"把(?P<old>[^，,。]{1,8}?)(?:换成|改成|换为)(?:了)?(?P<new>[^，,。]{1,8}?)了?$",
        anywhere=True,
    ),
    _rule(
        "zh-reply-not",
        "correction",
        _reply_not,
        "A value denied alone; the next clause says what holds instead: 不是芒果.",
        r"^(?:其实|而)?不是(?P<old>[^，,。]+)$",
    ),
    _rule(
        "zh-reply-but-is",
        "correction",
        _reply_but_is,
        "After a value denied, what holds instead: 而是菠萝.",
        r"^(?:而|应该)?是(?P<new>[^，,。]+)$",
    ),
    _rule(
        "zh-reply-pet-died",
        "pet",
        _reply_pet_died,
        "A pet that died is no longer had: 年糕上周走了.",
        r"^(?P<v>[^我你他她它，,。]{1,6}?)(?:走了|去世了|死了|没了|离开了)",
    ),
    _rule(
        "zh-reply-plan-off",
        "plan",
        _reply_plan_off,
        "A plan given up ends: 西安去不成了.",
        r"^(?P<v>[^我你，,。]{1,8}?)(?:去不成了|去不了了|不去了|取消了)",
    ),
)
