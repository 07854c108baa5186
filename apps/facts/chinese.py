"""The Chinese reading of a clause (pure: no Django, no database): who it is about and
what it says of them.

A clause is cleaned (greetings, hedges, filler and time words taken out), then read by the
rule tables of `chinese_rules`, in order: ZH_REPLIES (what answers or corrects the clause
before), then, once its subject is found ("我", "我姐姐", or dropped as chat drops it),
ZH_RULES. `chinese_words` holds the word classes they share.
"""

from __future__ import annotations

import re
from datetime import datetime

from apps.facts.chinese_rules import zh_facts, zh_reply
from apps.facts.chinese_words import ZH_RELATIONS
from apps.facts.grammar import ClauseState, Fact, Who
from apps.facts.time_words import apply_time, take_time

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
    replied = zh_reply(clause, carry)
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
    return zh_facts(rest, who, carry, correction)


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
        facts = zh_facts(clause, who, ClauseState(), True)
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
