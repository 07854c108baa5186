"""The Chinese rules: clauses, subjects and the facts they state (pure: no Django, no
database).
"""

from __future__ import annotations

import re
from datetime import datetime

from apps.facts import vocabulary
from apps.facts.grammar import ClauseState, Ending, Fact, Who, value_key
from apps.facts.time_words import apply_time, take_time

# --- Chinese --------------------------------------------------------------------------------

ZH_RELATIONS = (
    "姐姐|妹妹|哥哥|弟弟|妈妈|母亲|爸爸|父亲|老婆|妻子|太太|丈夫|老公|男朋友|女朋友|儿子|女儿"
    "|孩子|朋友|室友|同事|老板|爷爷|奶奶|外公|外婆|父母|叔叔|阿姨"
)
ZH_PETS = (
    "[\u4e00-\u9fff]{0,2}?(?:狗|猫)|鹦鹉|仓鼠|兔子|鱼|乌龟|柯基|泰迪|金毛|哈士奇|拉布拉多|柴犬|边牧"
    "|英短|美短|布偶|暹罗|博美|比熊|萨摩耶"
)
# Clauses end at punctuation or an emoji, at a conjunction, and, in chat, at a space
# between characters.
ZH_CLAUSES = re.compile(
    r"[，,。！!？?；;：:～~\n\U0001F300-\U0001FAFF\u2600-\u27BF]+|(?:但是|不过(?!敏)|而且|可是|所以)"
    r"|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])"
)
_ZH_LEAD = re.compile(
    r"^(?:你好|您好|嗨|哈喽|嗯|那个|对了|另外|还有|其实|顺便说一下|然后|而且|但是|不过|跟你说个事|跟你说"
    r"|告诉你|更新一下|说一下|好消息|坏消息|啊|哦|噢|诶|哎|好吧|不好意思)+[，,]?"
)
_ZH_CORRECTION = re.compile(
    r"^(?:其实|不对|更正一下|纠正一下|说错了|我说错了|我刚才说错了|刚才说错了|打错了|打错字了|写错了"
    r"|抱歉|不好意思|啊说错了)[，,]?"
)
_ZH_HEDGE = re.compile(r"可能|也许|大概|好像|应该是")
_ZH_SUBJECT = re.compile(rf"^我(?!们)(?:的)?(?P<rel>{ZH_RELATIONS})?")
_ZH_JOB_END = re.compile(
    r"(?:师|员|生|家|工|官|医生|护士|厨师|司机|经理|老板|作家|主管|总监|警察|律师|会计|记者|编辑|店主|学生"
    r"|策划|运营|销售|顾问|主播|编剧|导演|翻译|设计|店长|老师|教授|保安|快递员|骑手|测试|开发|运维|客服"
    r"|妈妈|爸爸|主妇|公务员)$"
)
_ZH_CONDITION = re.compile(
    r"(?:糖尿病|哮喘|高血压|低血压|偏头痛|心脏病|关节炎|湿疹|抑郁症|焦虑症|失眠|癌症|痛风|贫血|甲减|甲亢"
    r"|\w{1,4}(?:病|症|炎))"
)


def _zh_more(s: str, who: Who, carry: ClauseState, conf: float) -> list[Fact] | None:
    """Jobs at a place, new employers, shops, quitting a habit, pets named later."""
    p, n = who.prefix, who.name
    for part in (
        _zh_more_1,
        _zh_more_2,
        _zh_more_3,
        _zh_more_4,
    ):
        result = part(s, who, carry, conf, p, n)
        if result is not None:
            return result
    return None


def _zh_more_1(
    s: str, who: Who, carry: ClauseState, conf: float, p: str, n: str
) -> list[Fact] | None:
    """_zh_more's rules, part 1 of 4: None when none matches."""
    if m := re.match(r"^在(?P<v>生酮|节食|减肥|戒糖|断食|控糖)", s):
        return [Fact(f"{n}在{m.group('v')}。", f"{p}diet", "fact", conf, 0.7)]
    if m := re.match(r"^(?:把|将)?(?P<v>[^我你把将，,。]{1,6}?)停(?:掉)?了$", s):
        return [Fact("", "", "fact", conf, 0.6, ends=[Ending(value=m.group("v"))])]
    if m := re.match(rf"^(?:家)?(?P<species>{ZH_PETS})(?:叫|名叫)(?P<name>[^，,。]{{1,6}})$", s):
        name = m.group("name")
        return [
            Fact(
                f"{n}养了一只叫{name}的{m.group('species')}。",
                f"{p}pet:{value_key(name)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if m := re.match(r"^(?:现在)?(?:只|都|就)喝(?P<v>[^，,。]+?)了?$", s):
        value = m.group("v")
        return [Fact(f"{n}喝{value}。", f"{p}opinion:{value_key(value)}", "preference", conf, 0.6)]
    m = re.match(r"^(?P<v>(?![有得患没])[^，,。]{1,6}?)$", s)
    if m and _ZH_CONDITION.fullmatch(m.group("v")):  # "体检说我贫血"
        value = m.group("v")
        return [Fact(f"{n}患有{value}。", f"{p}condition:{value_key(value)}", "health", conf, 0.9)]
    if m := re.match(r"^是(?P<new>[^，,。不]{1,8})(?:而)?不是(?P<old>[^，,。]{1,8})$", s):
        return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]
    if m := re.match(r"^吃的(?:药)?(?:是|换成了?)(?P<v>[^，,。]{2,8})$", s):
        value = m.group("v")
        ends = [Ending(group=f"{p}medication")]
        return [
            Fact(
                f"{n}在服用{value}。",
                f"{p}medication:{value_key(value)}",
                "health",
                0.9,
                0.9,
                ends=ends,
            )
        ]
    if m := re.match(r"^(?:在家)?(?:全职)?(?:备考|考)(?P<v>[^，,。]{2,8})$", s):
        return [Fact(f"{n}在备考{m.group('v')}。", f"{p}study", "fact", conf, 0.6)]
    if m := re.match(r"^(?:开始)?住(?:在)?(?P<v>[^，,。了]{2,6})(?:了)?$", s):
        value = m.group("v")
        return [
            Fact(
                f"{n}住在{value}。",
                f"{p}home",
                "fact",
                conf,
                0.8,
                ends=[Ending(group=f"{p}plan", value=value)],
            )
        ]
    if m := re.match(r"^(?:现在)?(?:不再是|不是|已经不是)(?P<v>[^，,。]{1,6}?)了$", s):
        return [Fact("", "", "fact", conf, 0.7, ends=[Ending(value=m.group("v"))])]
    if m := re.match(r"^(?:是)?(?P<v>纯素|吃素|素食者|素食主义者)(?:的)?$", s):
        return [
            Fact(
                f"{n}吃{'纯素' if '纯' in m.group('v') else '素'}。", f"{p}diet", "fact", conf, 0.8
            )
        ]
    return None


def _zh_more_2(
    s: str, who: Who, carry: ClauseState, conf: float, p: str, n: str
) -> list[Fact] | None:
    """_zh_more's rules, part 2 of 4: None when none matches."""
    if carry.replace_kind == "medical-context" and (
        m := re.match(
            r"^(?:给我|帮我)?(?:换成|改成|换了|改用|改吃)(?:了)?(?P<new>[^，,。]+?)了?$", s
        )
    ):
        new = m.group("new")
        ends = [Ending(group=f"{p}medication")]
        return [
            Fact(
                f"{n}在服用{new}。",
                f"{p}medication:{value_key(new)}",
                "health",
                0.9,
                0.9,
                ends=ends,
            )
        ]
    if m := re.match(
        rf"^(?:又)?(?:捡了|领养了|收养了|买了|养了)(?:一只|一条|只|条)(?P<species>{ZH_PETS})$", s
    ):
        carry.species = m.group("species")
        return [
            Fact(
                f"{n}养了一只{carry.species}。",
                f"{p}pet:{value_key(carry.species)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if m := re.match(r"^从(?P<v>[^，,。]+?)(?:离职|辞职|退休)了?", s):
        ends = [Ending(slot=f"{p}employer"), Ending(slot=f"{p}job")]
        return [Fact("", "", "fact", conf, 0.7, ends=ends)]
    if m := re.match(r"^(?:过敏的|过敏源)(?:其实)?是(?P<v>[^，,。]+?)$", s):
        value = m.group("v")
        carry.last_group = f"{p}allergy"
        return [Fact(f"{n}对{value}过敏。", f"{p}allergy:{value_key(value)}", "health", conf, 0.95)]
    if m := re.match(r"^(?:不是|没有|并不是)(?P<v>[^对，,。]{1,6}?)过敏$", s):
        slot = f"{p}allergy:{value_key(m.group('v'))}"
        return [Fact("", slot, "health", conf, 0.9, ends=[Ending(slot=slot)])]
    if m := re.match(r"^(?:是)?(?P<v>[^对不，,。是]{1,6}?)过敏$", s):
        value = m.group("v")
        carry.last_group = f"{p}allergy"
        return [Fact(f"{n}对{value}过敏。", f"{p}allergy:{value_key(value)}", "health", conf, 0.95)]
    if carry.last_group and (m := re.match(r"^(?:不是|而不是)(?P<v>[^，,。]{1,6})$", s)):
        group, carry.last_group = carry.last_group, ""
        person, _, head = group.rpartition("|")
        slot = f"{person + '|' if person else ''}{head}:{value_key(m.group('v'))}"
        return [Fact("", slot, "health", conf, 0.9, ends=[Ending(slot=slot)])]
    if m := re.match(
        r"^(?:一直|每天|长期|还在|正在)?(?:在)?(?:吃|服用|服)(?P<v>[\u4e00-\u9fff]{2,8}?"
        r"(?:平|坦|林|素|酮|胺|醇|尔|利|汀|胍|片|胶囊|药|乐|唑|星|宁|韦))"
        r"(?:来)?(?:(?:控制|治疗|降|调理|稳定|预防)[\u4e00-\u9fff]{1,6})?$",
        s,
    ):
        value = m.group("v")
        return [
            Fact(f"{n}在服用{value}。", f"{p}medication:{value_key(value)}", "health", conf, 0.9)
        ]
    if m := re.match(
        r"^(?:体检)?(?:查出|检查出|确诊|诊断出|查出来)(?:了|有)?(?P<v>[^，,。]+?)$", s
    ):
        value = m.group("v")
        return [Fact(f"{n}患有{value}。", f"{p}condition:{value_key(value)}", "health", conf, 0.9)]
    if m := re.match(r"^(?:朋友|大家|别人|他们|家里人)(?:都)?(?:叫|喊)我(?P<v>[^，,。]{1,4})$", s):
        return [Fact(f"{n}的昵称是{m.group('v')}。", f"{p}nickname", "fact", conf, 0.7)]
    if m := re.match(r"^搬回(?:了)?(?:老家)?(?P<v>[^，,。]+?)了?$", s):
        return [Fact(f"{n}住在{m.group('v')}。", f"{p}home", "fact", conf, 0.8)]
    return None


def _zh_more_3(
    s: str, who: Who, carry: ClauseState, conf: float, p: str, n: str
) -> list[Fact] | None:
    """_zh_more's rules, part 3 of 4: None when none matches."""
    if m := re.match(rf"^(?:朋友|别人|家里)?送了我(?:一只|一条|只|条)(?P<species>{ZH_PETS})$", s):
        carry.species = m.group("species")
        return [
            Fact(
                f"{n}养了一只{carry.species}。",
                f"{p}pet:{value_key(carry.species)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if m := re.match(r"^(?:停了|停用了|不吃了|不再吃|停掉了)(?P<v>[^，,。]+?)了?$", s):
        carry.replace_old, carry.replace_kind = m.group("v"), "medication"
        return [
            Fact(
                "",
                "",
                "health",
                0.9,
                0.8,
                ends=[
                    Ending(group=f"{p}medication", value=m.group("v")),
                    Ending(value=m.group("v")),
                ],
            )
        ]
    if carry.replace_old and (
        m := re.match(r"^(?:换成|改成|换了|改用|改吃)(?:了)?(?P<new>[^，,。]+?)了?$", s)
    ):
        old, carry.replace_old = carry.replace_old, ""
        new = m.group("new")
        if carry.replace_kind == "medication":
            carry.replace_kind = ""
            return [
                Fact(f"{n}在服用{new}。", f"{p}medication:{value_key(new)}", "health", 0.9, 0.9)
            ]
        return [Fact("", "", "correction", 0.9, 0.8, replace=(old, new))]
    if m := re.match(
        r"^(?:跳槽到|跳槽去|跳到|入职|加入)(?:了)?(?P<v>[^，,。]+?)(?:工作|上班)?了?$", s
    ):
        return [Fact(f"{n}在{m.group('v')}工作。", f"{p}employer", "fact", conf, 0.75)]
    if m := re.match(
        r"^在(?P<org>(?!家|宿舍|厨房|路上|外面|这|那)[^，,。]{1,12}?)(?:做|当|开)(?P<job>[^，,。]{1,10}?)(?:的)?$",
        s,
    ):
        return [Fact(f"{n}在{m.group('org')}做{m.group('job')}。", f"{p}job", "fact", conf, 0.75)]
    if m := re.match(r"^(?:自己)?开了(?:一)?(?:家|个|间)(?P<v>[^，,。]+?)$", s):
        return [Fact(f"{n}开了一家{m.group('v')}。", f"{p}job", "fact", conf, 0.7)]
    if m := re.match(r"^(?:戒了|戒掉了|戒)(?P<v>[^，,。]+?)了?$", s):
        return [Fact("", "", "preference", conf, 0.6, ends=[Ending(value=m.group("v"))])]
    if m := re.match(
        r"^(?:开始|又开始|重新)吃(?P<v>肉|鱼|海鲜|鸡肉|猪肉|牛肉|羊肉|鸡蛋|蛋|荤)了?$", s
    ):
        return [Fact(f"{n}吃{m.group('v')}。", f"{p}diet", "fact", conf, 0.7)]
    if m := re.match(
        rf"^养了?(?:一只|一条|只|条)叫(?P<name>[^，,。的]{{1,6}})的(?P<species>{ZH_PETS})$", s
    ):
        name = m.group("name")
        return [
            Fact(
                f"{n}养了一只叫{name}的{m.group('species')}。",
                f"{p}pet:{value_key(name)}",
                "fact",
                conf,
                0.7,
            )
        ]
    return None


def _zh_more_4(
    s: str, who: Who, carry: ClauseState, conf: float, p: str, n: str
) -> list[Fact] | None:
    """_zh_more's rules, part 4 of 4: None when none matches."""
    if m := re.match(r"^(?:改喝|改吃|改成喝|改成吃|开始喝|开始吃)(?:了)?(?P<v>[^，,。]+?)了?$", s):
        verb = "喝" if "喝" in m.group(0)[:4] else "吃"
        value = m.group("v")
        return [
            Fact(f"{n}{verb}{value}。", f"{p}opinion:{value_key(value)}", "preference", conf, 0.6)
        ]
    if m := re.match(rf"^(?:开始)?养(?:了)?(?:一只|一条|只|条|个)?(?P<species>{ZH_PETS})了?$", s):
        carry.species = m.group("species")
        return [
            Fact(
                f"{n}养了一只{carry.species}。",
                f"{p}pet:{value_key(carry.species)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if carry.species and (
        m := re.match(
            r"^(?:我)?(?:给它|给他|给她)?(?:叫|名叫|取名叫?|起名叫?|名字叫)(?P<name>[^，,。]{1,6})$",
            s,
        )
    ):
        species, carry.species = carry.species, ""
        name = m.group("name")
        return [
            Fact("", "", "fact", conf, 0.6, ends=[Ending(slot=f"{p}pet:{value_key(species)}")]),
            Fact(
                f"{n}养了一只叫{name}的{species}。", f"{p}pet:{value_key(name)}", "fact", conf, 0.7
            ),
        ]
    if carry.corrected and (m := re.match(r"^(?:应该)?是(?P<v>[\u4e00-\u9fff]{2,3})$", s)):
        carry.corrected = False
        return [Fact(f"{n}的名字是{m.group('v')}。", f"{p}name", "fact", 0.9, 0.9)]
    return None


def _zh_facts(clause: str, who: Who, carry: ClauseState, correction: bool) -> list[Fact]:
    p, n = who.prefix, who.name
    conf = 0.9 if correction else 0.8
    s = clause
    found = _zh_more(s, who, carry, conf)
    for part in (
        _zh_facts_1,
        _zh_facts_2,
        _zh_facts_3,
    ):
        result = part(clause, who, carry, correction, p, n, conf, s, found)
        if result is not None:
            return result
    return []


def _zh_facts_1(
    clause: str,
    who: Who,
    carry: ClauseState,
    correction: bool,
    p: str,
    n: str,
    conf: float,
    s: str,
    found: list[Fact] | None,
) -> list[Fact] | None:
    """_zh_facts's rules, part 1 of 3: None when none matches."""
    if found is not None:
        return found
    if m := re.match(r"^(?:(?P<neg>不|并不|其实不|没有)对|对)(?P<v>.+?)(?P<neg2>不)?过敏", s):
        value = m.group("v")
        slot = f"{p}allergy:{value_key(value)}"
        if m.group("neg") or m.group("neg2"):
            carry.negated = ("zh-allergy", who)
            return [Fact("", slot, "health", conf, 0.9, ends=[Ending(slot=slot)])]
        return [Fact(f"{n}对{value}过敏。", slot, "health", conf, 0.95)]
    if m := re.match(r"^(?:是对|是)(?P<v>.+?)过敏", s):
        value = m.group("v")
        return [Fact(f"{n}对{value}过敏。", f"{p}allergy:{value_key(value)}", "health", 0.9, 0.95)]
    if m := re.match(
        r"^(?:叫|名叫|的名字是|名字叫|名字是|全名叫|全名是|大名叫|本名叫)(?P<v>[^\s，,。]{1,12})", s
    ):
        return [Fact(f"{n}的名字是{m.group('v')}。", f"{p}name", "fact", conf, 0.9)]
    if m := re.match(
        r"^(?:现在|已经)?(?:住在|搬到了|搬到|搬去了|搬去|定居在|生活在)(?P<v>[^，,。]+?)(?:了|住|生活)?$",
        s,
    ):
        value = m.group("v")
        return [Fact(f"{n}住在{value}。", f"{p}home", "fact", conf, 0.8)]
    # "在成都住了五年了": where one has lived (for so long) is where one lives.
    if m := re.match(r"^(?:一直|现在)?在(?P<v>[^，,。\s]{2,12}?)(?:住了|生活了)[^，,。]{0,8}$", s):
        value = m.group("v")
        return [Fact(f"{n}住在{value}。", f"{p}home", "fact", conf, 0.8)]
    if m := re.match(r"^(?:不再|已经不)(?:住在)(?P<v>.+?)了?$", s):
        return [
            Fact(
                "",
                f"{p}home",
                "fact",
                conf,
                0.8,
                ends=[Ending(slot=f"{p}home", value=m.group("v"))],
            )
        ]
    if re.match(r"^(?:辞职了|辞职|失业了|退休了|被裁员了|离职了)", s):
        statement = f"{n}已退休。" if "退休" in s else ""
        return [
            Fact(
                statement,
                f"{p}job" if statement else "",
                "fact",
                conf,
                0.7,
                ends=[Ending(slot=f"{p}job"), Ending(slot=f"{p}employer")],
            )
        ]
    if m := re.match(r"^(?:不再|不)(?:当|做|是)(?P<v>.+?)了?$", s):
        value = m.group("v")
        if _ZH_JOB_END.search(value):
            return [
                Fact(
                    "",
                    "",
                    "fact",
                    conf,
                    0.7,
                    ends=[Ending(group=f"{p}job", value=value), Ending(value=value)],
                )
            ]
    if m := re.match(
        r"^(?:可惜)?(?:现在)?(?:还|仍然|依然|一直)?(?:得|要)?在(?P<v>.+?)(?:工作|上班)", s
    ):
        return [Fact(f"{n}在{m.group('v')}工作。", f"{p}employer", "fact", conf, 0.75)]
    return _zh_in_a_place(s, p, n, conf)


# Where one studies or is, in a known place ("在南京读研", "现在还在长沙"):
# `vocabulary.zh_place_named` decides what a place is ("在公司" names none).
_ZH_IN_PLACE = re.compile(
    r"^(?:现在)?(?:还|仍然|依然|一直)?在(?P<place>[\u4e00-\u9fff]{2,5}?)"
    r"(?:(?P<study>读研|读博|读书|上学|上大学|读大学|念书)|(?:呢|啊|呀)?$)"
)


# "(从)成都搬到了昆明": a move from a known place.
_ZH_MOVED_FROM = re.compile(
    r"^(?P<old>[^，,。住]{2,6}?)(?:搬到了|搬到|搬去了|搬去)(?P<v>[^，,。]+?)(?:了|住)?$"
)


def _zh_in_a_place(s: str, p: str, n: str, conf: float) -> list[Fact] | None:
    moved = _ZH_MOVED_FROM.match(s)
    if moved and vocabulary.zh_place_named(moved.group("old")) == moved.group("old"):
        return [Fact(f"{n}住在{moved.group('v')}。", f"{p}home", "fact", conf, 0.8)]
    m = _ZH_IN_PLACE.match(s)
    if m is None or vocabulary.zh_place_named(m.group("place")) != m.group("place"):
        return None
    place = m.group("place")
    if m.group("study"):
        return [Fact(f"{n}在{place}{m.group('study')}。", f"{p}home", "fact", conf, 0.75)]
    return [Fact(f"{n}住在{place}。", f"{p}home", "fact", conf, 0.8)]


def _zh_facts_2(
    clause: str,
    who: Who,
    carry: ClauseState,
    correction: bool,
    p: str,
    n: str,
    conf: float,
    s: str,
    found: list[Fact] | None,
) -> list[Fact] | None:
    """_zh_facts's rules, part 2 of 3: None when none matches."""
    if m := re.match(
        r"^(?:现在)?(?:转行|改行|开始)?(?:是|当|做)(?:了)?(?:一名|一个|一位|名|个)?"
        r"(?P<v>[^，,。]{1,12}?)(?:了|的)?(?:就是.*)?$",
        s,
    ):
        value = m.group("v")
        if re.search(r"(?:素食|吃素)", value):
            return [Fact(f"{n}吃素。", f"{p}diet", "fact", conf, 0.8)]
        if _ZH_JOB_END.search(value):
            return [Fact(f"{n}是{value}。", f"{p}job", "fact", conf, 0.75)]
    if re.match(r"^(?:现在)?(?:吃素|只吃素|是素食者|是素食主义者)", s):
        return [Fact(f"{n}吃素。", f"{p}diet", "fact", conf, 0.8)]
    if m := re.match(r"^(?:不再|不|已经不|戒了)吃(?P<v>[^，,。了]+)了?", s):
        return [Fact(f"{n}不吃{m.group('v')}。", f"{p}diet", "fact", conf, 0.8)]
    if m := re.match(
        rf"^(?:养了|养|有)(?:一只|一条|两只|只|条|一个)?(?P<species>{ZH_PETS})[，,]?(?:叫"
        r"|名叫|名字叫)(?P<name>[^\s，,。]+)",
        s,
    ):
        name = m.group("name")
        return [
            Fact(
                f"{n}养了一只叫{name}的{m.group('species')}。",
                f"{p}pet:{value_key(name)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if m := re.match(rf"^(?:养了|养|有)(?:一只|一条|两只|只|条)(?P<species>{ZH_PETS})", s):
        return [
            Fact(
                f"{n}养了一只{m.group('species')}。",
                f"{p}pet:{value_key(m.group('species'))}",
                "fact",
                conf,
                0.7,
            )
        ]
    m = re.match(r"^(?:没有|不再有|已经没有)(?P<v>.+?)了?$", s)
    if m and _ZH_CONDITION.search(m.group("v")):
        value = m.group("v")
        return [
            Fact(
                "",
                "",
                "health",
                conf,
                0.9,
                ends=[
                    Ending(slot=f"{p}condition:{value_key(value)}"),
                    Ending(group=f"{p}condition", value=value),
                ],
            )
        ]
    if m := re.match(r"^(?:有|得了|患有|被诊断出)(?P<v>.+)$", s):
        value = m.group("v").rstrip("了")
        if _ZH_CONDITION.fullmatch(value):
            return [
                Fact(f"{n}患有{value}。", f"{p}condition:{value_key(value)}", "health", conf, 0.9)
            ]
    return None


def _zh_facts_3(
    clause: str,
    who: Who,
    carry: ClauseState,
    correction: bool,
    p: str,
    n: str,
    conf: float,
    s: str,
    found: list[Fact] | None,
) -> list[Fact] | None:
    """_zh_facts's rules, part 3 of 3: None when none matches."""
    if m := re.match(
        r"^(?P<neg>不再|不)?(?:越来越|突然|很|非常|特别|也|还挺|还|超|超级|最|真的|好|挺|蛮)?"
        r"(?P<verb>喜欢上了|喜欢上|爱上了|爱上|喜欢|爱|热爱|讨厌|不喜欢)"
        r"(?P<v>[^，,。]+?)(?:了|的)?$",
        s,
    ):
        value = m.group("v")
        dislike = m.group("verb") in ("讨厌", "不喜欢") or bool(m.group("neg"))
        text = f"{n}{'不喜欢' if dislike else '喜欢'}{value}。"
        thing = re.sub(r"^(?:吃|喝|玩|看|听)", "", value)  # 喜欢吃香菜, 爱上香菜: one opinion
        return [Fact(text, f"{p}opinion:{value_key(thing)}", "preference", conf, 0.6)]
    if m := re.match(r"^(?:不去|不打算去|取消了)(?P<v>.+?)了?$", s):
        return [
            Fact("", "", "plan", conf, 0.6, ends=[Ending(group=f"{p}plan", value=m.group("v"))])
        ]
    if m := re.match(r"^(?:打算|计划|准备|要|将要|想要|会)(?P<v>.{2,})$", s):
        value = m.group("v")
        return [Fact(f"{n}计划{value}。", f"{p}plan:{value_key(value)}", "plan", 0.75, 0.6)]
    if m := re.match(r"^(?:是)?(?:已经)?(?P<v>结婚了?|离婚了?|订婚了?|单身|已婚)", s):
        value = m.group("v")
        return [
            Fact(
                f"{n}{value.rstrip('了')}。" if value != "单身" else f"{n}是单身。",
                f"{p}marital",
                "relationship",
                conf,
                0.75,
            )
        ]
    if m := re.match(r"^(?:去了|去过|参加了|看了|买了|完成了|毕业了)(?P<v>.*)$", s):
        text = f"{n}{m.group(0)}。"
        return [Fact(text, f"{p}event:{value_key(m.group(0))}", "event", 0.8, 0.6)]
    return None


_ZH_FILLER = re.compile(
    r"(?:哈哈+|呵呵|嘿嘿|啊|呀|吧|啦|嘛|哦|喔|噢|咯|😂|🎉|[\U0001F300-\U0001FAFF])+$"
)
_ZH_DROPPED = re.compile(
    r"^(?:也|还|都|又|再|就|已经|现在|刚|刚刚|终于|自己|平时|一直|经常|目前|换了(?:份|个)?工作|人)*"
    r"(?:辞职|离职|退休|失业|搬|住|在|做|当|是|转行|改行|过敏|体检|查出|确诊|朋友|大家|从|最爱|超爱|单身"
    r"|家里|捡了|领养|收养|取名|突然|爱上|喜欢上|就是|不是|吃的"
    r"|跳槽|开了|开始|戒|改|养|不再|不|没有|有|得了|患|对|叫|喜欢|爱|超爱|最爱|讨厌|打算|计划|准备|要"
    r"|去了|结婚|离婚|订婚|停|换)"
)


def _zh_parse(clause: str, who: Who, carry: ClauseState, correction: bool) -> list[Fact]:
    # "不是芒果，是菠萝": a value said before, corrected (across the two clauses too)
    replied = _zh_reply(clause, who, carry, correction)
    if replied is not None:
        return replied
    subject = _ZH_SUBJECT.match(clause)
    if subject is None:
        found = re.search(rf"我(?!们)(?:的)?(?P<rel>{ZH_RELATIONS})?", clause)
        if found and found.start() <= 8:  # "医生说我其实...", "跟你说个事，我..."
            subject = found
    if subject:
        rel = subject.group("rel")
        who = Who(f"用户的{rel}", f"{rel}|") if rel else Who("用户", "")
        rest = clause[subject.end() :]
    elif re.match(r"^(?:她|他)", clause) and who.prefix:
        rest = clause[1:]
    elif _ZH_DROPPED.match(clause):  # the subject dropped, as chat does: "辞职了，现在做摄影师"
        rest = clause
    else:
        return []
    if re.search(r"医生|大夫|医院|药", clause):
        carry.replace_kind = carry.replace_kind or "medical-context"
    rest = re.sub(
        r"^(?:就是|家里|换了(?:份|个)?工作|还是|现在|已经|刚刚|终于|其实|自己|平时|一直|经常|目前"
        r"|也|还|都|又|刚|从|就|家(?=有|养|里)|人(?=也|都|已经|就))+",
        "",
        rest,
    )
    return _zh_facts(rest, who, carry, correction)


def _zh_reply(clause: str, who: Who, carry: ClauseState, correction: bool) -> list[Fact] | None:
    """Clauses that answer or correct the one before ("不是X", "而是Y", "X去不成了"):
    None when none matches."""
    if m := re.match(
        r"^(?:其实|而)?不是(?P<old>[^，,。]+?)[，,]?(?:而)?是(?P<new>[^，,。]+)$", clause
    ):
        return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]
    if carry.last_group and (m := re.match(r"^(?:而)?不是(?P<v>[^，,。]{1,6})$", clause)):
        group, carry.last_group = carry.last_group, ""
        person, _, head = group.rpartition("|")
        slot = (
            f"{person}|{head}:{value_key(m.group('v'))}"
            if person
            else f"{head}:{value_key(m.group('v'))}"
        )
        return [Fact("", slot, "health", 0.9, 0.9, ends=[Ending(slot=slot)])]
    if m := re.match(
        rf"^(?:朋友|别人|家里人?)?送了我(?:一只|一条|只|条)(?P<species>{ZH_PETS})$", clause
    ):
        carry.species = m.group("species")
        text = f"用户养了一只{carry.species}。"
        return [Fact(text, f"pet:{value_key(carry.species)}", "fact", 0.8, 0.7)]
    if m := re.match(
        r"^(?:你)?(?:叫|喊)我(?P<v>[^，,。就吧]{1,4})(?:就行|就好|就可以|吧)?", clause
    ):
        return [Fact(f"用户的昵称是{m.group('v')}。", "nickname", "fact", 0.8, 0.7)]
    if m := re.match(
        r"^(?P<old>[^我你，,。]{1,6}?)改名(?:了|字了)?(?:叫(?P<new>[^，,。]{1,6}))?$", clause
    ):
        if m.group("new"):
            return [Fact("", "", "correction", 0.9, 0.7, replace=(m.group("old"), m.group("new")))]
        carry.replace_old = m.group("old")
        return []
    if carry.replace_old and (
        m := re.match(r"^(?:现在)?(?:它|他|她)(?:叫|改叫)(?P<new>[^，,。]{1,6})$", clause)
    ):
        old, carry.replace_old = carry.replace_old, ""
        return [Fact("", "", "correction", 0.9, 0.7, replace=(old, m.group("new")))]
    if m := re.match(
        r"^(?:朋友|大家|别人|他们|家里人)(?:都)?(?:叫|喊)我(?P<v>[^，,。]{1,4})$", clause
    ):
        return [Fact(f"用户的昵称是{m.group('v')}。", "nickname", "fact", 0.8, 0.7)]
    if m := re.search(
        r"从(?P<old>[^，,。从]{1,8}?)(?:换成|改成|换为|改为)(?:了)?(?P<new>[^，,。]{1,8}?)了?$",
        clause,
    ):
        return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]
    if m := re.match(
        r"^(?P<v>[^我你，,。]{1,6}?)(?:没问题|可以吃|我可以吃|吃没事|我吃没事|没事)$", clause
    ):
        return [
            Fact("", "", "health", 0.9, 0.9, ends=[Ending(group="allergy", value=m.group("v"))])
        ]
    if m := re.search(
        r"把(?P<old>[^，,。]{1,8}?)(?:换成|改成|换为)(?:了)?(?P<new>[^，,。]{1,8}?)了?$", clause
    ):
        return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]
    if m := re.match(r"^(?:其实|而)?不是(?P<old>[^，,。]+)$", clause):
        carry.replace_old = m.group("old")
        return []
    if carry.replace_old and (m := re.match(r"^(?:而|应该)?是(?P<new>[^，,。]+)$", clause)):
        old, carry.replace_old = carry.replace_old, ""
        return [Fact("", "", "correction", 0.9, 0.8, replace=(old, m.group("new")))]
    # "年糕上周走了": a pet died
    if m := re.match(r"^(?P<v>[^我你他她它，,。]{1,6}?)(?:走了|去世了|死了|没了|离开了)", clause):
        return [Fact("", "", "fact", 0.8, 0.6, ends=[Ending(group="pet", value=m.group("v"))])]
    # "西安去不成了": a plan given up
    if m := re.match(r"^(?P<v>[^我你，,。]{1,8}?)(?:去不成了|去不了了|不去了|取消了)", clause):
        return [Fact("", "", "plan", 0.8, 0.6, ends=[Ending(group="plan", value=m.group("v"))])]
    return None


# A condition or a wish states nothing ("要是我住在海边就好了", "如果我是医生").
_ZH_UNREAL = re.compile(r"^(?:要是|如果|假如|假设|万一|倘若|若是|要不是|哪怕|但愿|希望)|就好了$")


def chinese_clause(
    raw: str, carry: ClauseState, now: datetime, previous: Who
) -> tuple[list[Fact], Who]:
    clause = _ZH_LEAD.sub("", raw.strip())
    correction = bool(_ZH_CORRECTION.match(clause)) or raw.strip().startswith("其实")
    clause = _ZH_CORRECTION.sub("", clause)
    if correction and not clause.strip():
        carry.corrected = True
    hedged = bool(_ZH_HEDGE.search(clause))
    clause = _ZH_HEDGE.sub("", clause)
    clause, when = take_time(clause, now)
    clause = re.sub(r"^从(?:起|开始)?|(?<=^)起", "", clause.replace(" ", ""))
    clause = re.sub(r"^(?:从)?(?:起|开始)(?=我)", "", clause)
    clause = _ZH_FILLER.sub("", clause)
    if not clause or clause.endswith(("吗", "呢", "？", "?")) or _ZH_UNREAL.search(clause):
        return [], previous
    who = previous
    if clause.startswith(("是对", "是")) and carry.negated is not None:
        _, who = carry.negated
        carry.negated = None
        facts = _zh_facts(clause, who, ClauseState(), True)
    else:
        facts = _zh_parse(clause, who, carry, correction)
        if facts and facts[0].slot.rpartition("|")[0]:
            who = Who(
                f"用户的{facts[0].slot.rpartition('|')[0]}", facts[0].slot.rpartition("|")[0] + "|"
            )
        elif facts:
            who = Who("用户", "")
    for fact in facts:
        if hedged:
            fact.confidence = min(fact.confidence, 0.5)
        apply_time(fact, when, now)
    return facts, who
