"""Health changes read around known values: what a turn says no longer holds, and what holds
instead, for the values of the closed vocabularies (`vocabulary`).

"The cardiologist took me off metoprolol and put me on amlodipine", "I'm not allergic to
tree nuts after all, it was sesame", "医生说不是哮喘，就是过敏性鼻炎", "把二甲双胍停了": the
clause rules may miss such a sentence's shape, but its values are known words, and the few
words right before or after each value say which way it goes. A value after a *stop* cue
("off", "stopped", "not allergic to", "instead of", "不是", "停了") no longer holds: its facts
end. Another value of the same group in that sentence, after a *start* cue ("on", "to",
"it was", "就是", "换成"), holds instead. A start cue alone starts nothing: a new value is
read only where the sentence ends an old one, so "I read about amlodipine" states nothing.
A stop with nothing instead, said with a change cue ("my doctor took me off metformin",
"turns out it wasn't asthma") is left to `doubt`: a person decides.

Sentences about somebody else ("my dad stopped his warfarin", "我妈不吃药了") or about
what might be ("if I stopped metformin") change nothing here.

Pure: no Django, no database.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from apps.facts import vocabulary
from apps.facts.doubt import HEALTH_GROUPS, RELATIONS_EN, RELATIONS_ZH_SHORT, cued
from apps.facts.grammar import Ending, Fact, value_key


@dataclass(frozen=True)
class Change:
    """A value of a health `group` the sentence says `holds` (True) or no longer holds."""

    group: str
    value: str
    holds: bool


_ARTICLE_EN = r"(?:(?:the|my|any|all|some|a|an|that|this|those)\s+)?"
# Cues right before a value: (cue pattern, the group whose values it stops).
_STOP_BEFORE_EN = (
    (
        r"\b(?:off|stopp(?:ed|ing)|stops?|quit(?:ting)?|dropp(?:ed|ing)|discontinu(?:ed|ing)|pulled"
        r"|instead\s+of|(?:switch|chang|mov|swapp)(?:ed|ing)\s+(?:me\s+)?from|replac(?:ed|ing)"
        r"|no\s+longer\s+(?:on|taking|take)"
        r"|(?:not|n't)\s+(?:on|taking|take))\s+" + _ARTICLE_EN + "$",
        "medication",
    ),
    (
        r"\b(?:not|n't|no\s+longer|never\s+(?:been|was))\s+(?:actually\s+|really\s+|even\s+)?"
        r"allergic\s+to\s+" + _ARTICLE_EN + r"(?:[a-z-]+\s+)?$"
        r"|\boutgr[eo]wn?\s+" + _ARTICLE_EN + r"$|\bnegative\s+for\s+" + _ARTICLE_EN + "$"
        r"|\b(?:it's|it\s+is|it\s+was)\s+(?:not|never)\s+(?:actually\s+)?$|\bit\s+wasn't\s+$",
        "allergy",
    ),
    (
        r"\b(?:not|weren't|wasn't|isn't|aren't|never\s+had|negative\s+for"
        r"|(?:don't|do\s+not|doesn't|no\s+longer)"
        r"\s+have)\s+(?:actually\s+|really\s+|even\s+)?" + _ARTICLE_EN + "$",
        "condition",
    ),
)
_STOP_AFTER_EN = (
    r"^\s*(?:allergy\s+)?(?:was|were|is)\s+(?:a\s+)?(?:misdiagnos|false\s+alarm)"
    r"|^\s*(?:allergy\s+)?(?:tests?\s+|panel\s+|results?\s+)?(?:came\s+back|was|were|is|tested)\s+"
    r"(?:totally\s+|completely\s+|all\s+)?(?:negative|clear)\b"
)
# "ibuprofen is actually fine for me": said of an allergen, no allergy.
_STOP_AFTER_EN_ALLERGY = (
    r"^\s*(?:is|are)\s+(?:actually\s+|totally\s+|perfectly\s+)?(?:fine|ok|okay)\b"
)
_START_BEFORE_EN = (
    r"\b(?:on|onto|to|with|it's|its|it\s+is|it\s+was|they're|they\s+are|just|only|actually"
    r"|instead|is|was|be|really|allergic\s+to|react\s+to)\s+" + _ARTICLE_EN + "$"
)
_START_AFTER_EN = r"^\s*(?:instead|now)\b"
# Cues that start a value with nothing stopped: a prescription.
_START_ALONE_EN = (
    r"\b(?:put|started|starting)\s+me\s+on\s+" + _ARTICLE_EN + r"$|\bprescribed\s+(?:me\s+)?$"
)
_START_ALONE_ZH = r"(?:给我|医生)?开了(?:点|些)?$"
# A switch: the group's values before it stop ("把氨氯地平换成缬沙坦", "switched me to ...").
_SWITCH = re.compile(
    r"换成|改成|改吃|换吃|\bswitch(?:ed|ing)?\s+(?:me\s+)?(?:over\s+)?to\b"
    r"|\bchang(?:ed|ing)\s+me\s+(?:over\s+)?to\b|\bmov(?:ed|ing)\s+me\s+(?:over\s+)?(?:on)?to\b",
    re.I,
)

_STOP_BEFORE_ZH = (
    r"(?:不是|并不是|没有|停(?:了|掉|用)?|不再(?:吃|用)|不用(?:再)?吃|别再?吃|不吃|戒(?:了|掉)?)$"
)
_STOP_AFTER_ZH = r"^(?:了)?(?:停|换成|换掉|改成|撤|不用(?:再)?吃|不吃了|是误诊|误诊|是阴性|阴性)"
_STOP_AFTER_ZH_ALLERGY = r"^(?:其实)?并?不过敏|^[^，,。]{0,10}(?:都|也)?没(?:事|问题|反应)"
_START_BEFORE_ZH = (
    r"(?:换成(?:了)?|改成(?:了)?|改吃|换吃|就是|而是|是|其实是|现在吃|开了|开始吃)对?$"
)

# Somebody else's, or not real. (他 in a drug's name, 氯雷他定, is no "he".)
_OTHER_EN = re.compile(
    rf"\b(?:my\s+{RELATIONS_EN}|his|her)\b|\b(?:if|whether|might|maybe|should\s+i|could\s+i)\b",
    re.I,
)
_OTHER_ZH = re.compile(
    rf"我{RELATIONS_ZH_SHORT}|(?<![\u4e00-\u9fff])他|他(?=[们的说是在有也都就还要会让把给对吃得不没刚已])|她"
    r"|如果|要是|万一|假如|是不是|会不会|能不能"
)
_SENTENCES = re.compile(r"(?<=[.!?。！？；;])\s*|\n+|\s*\bbut\b\s*|但是|可是")
_WINDOW = 40  # characters read either side of a value


def changes_of(
    sentence: str, *, stopped_before: frozenset[str] = frozenset(), allergy: bool = False
) -> list[Change]:
    """The health changes one sentence states: values that stop, and, where one stops (here,
    or in an earlier sentence of the turn: `stopped_before`), the values of its group that
    hold instead; `allergy`: an earlier sentence spoke of allergy."""
    if (_OTHER_EN.search(sentence) or _OTHER_ZH.search(sentence)) is not None:
        return []
    switch = _SWITCH.search(sentence)
    changes: list[Change] = []
    for group in HEALTH_GROUPS:
        found = _values(sentence, group, allergy=allergy)
        stopped = [
            (v, at)
            for v, at in found
            if _stops(sentence, v, at, group) or (switch is not None and at < switch.start())
        ]
        changes.extend(Change(group, v, holds=False) for v, _ in stopped)
        gone = {v for v, _ in stopped}
        may_start = bool(stopped) or group in stopped_before
        started = False  # the value before this one started: "only cashews and pistachios"
        for value, at in found:
            if value in gone:
                started = False
                continue
            switched = switch is not None and 0 <= at - switch.end() <= 12
            joined = started and re.search(r"(?:\band|&|,|、|和)\s*$", sentence[:at]) is not None
            started = (
                (may_start and (_starts(sentence, value, at) or joined))
                or switched
                or _starts_alone(sentence, at)
            )
            if started:
                changes.append(Change(group, value, holds=True))
    return list(dict.fromkeys(changes))


# "I take montelukast for my asthma": a known condition the speaker calls theirs.
_MY_CONDITION = re.compile(
    r"\b(?:for|because\s+of)\s+(?:my|the)\s+(?P<v>[a-z'-]+(?:\s+[a-z'-]+)?)", re.I
)


def conditions_owned(sentence: str) -> list[Change]:
    """The known conditions a sentence names as the speaker's own ("for my asthma")."""
    if _OTHER_EN.search(sentence):
        return []
    found = []
    for match in _MY_CONDITION.finditer(sentence):
        for value, _ in _values(match.group("v"), "condition"):
            found.append(Change("condition", value, holds=True))
    return found


# "I don't take anything", "not allergic to anything", "我自己啥药都不吃": a whole group ends.
_NOTHING = (
    (
        re.compile(
            r"\bi\s+(?:do\s+not|don't|dont)\s+take\s+(?:anything|any\s+(?:meds|medications?|pills))"
            r"|\b(?:i'm|i\s+am|im)\s+not\s+(?:on|taking)\s+(?:anything|any\s+(?:meds|medications?))"
            r"|(?:啥|什么)药都(?:不|没)(?:吃|用)",
            re.I,
        ),
        "medication",
    ),
    (
        re.compile(
            r"\bnot\s+allergic\s+to\s+anything|(?:啥|什么)都不过敏|对(?:啥|什么)都不过敏", re.I
        ),
        "allergy",
    ),
)


def change_facts(text: str, resolved: Callable[[str, str], bool]) -> list[Fact]:
    """The facts and endings of a turn's health changes, none for a value `resolved`
    (the clause rules already set or ended it)."""
    facts: list[Fact] = []
    stopped: set[str] = set()
    allergy = False
    for sentence in _SENTENCES.split(text):
        if not sentence or not sentence.strip():
            continue
        changes = changes_of(sentence, stopped_before=frozenset(stopped), allergy=allergy)
        changes += [c for c in conditions_owned(sentence) if c not in changes]
        allergy = allergy or _ALLERGY.search(sentence) is not None
        stopped.update(c.group for c in changes if not c.holds)
        for pattern, group in _NOTHING:
            if pattern.search(sentence) and not _OTHER_EN.search(sentence):
                facts.append(Fact("", "", "health", 0.9, 0.8, ends=[Ending(group=group)]))
        if cued(sentence) and not any(change.holds for change in changes):
            continue  # "my doctor took me off the metformin": nothing holds instead: doubt
        for change in changes:
            if resolved(change.group, change.value):
                continue
            if change.holds:
                facts.append(_statement(change))
            else:
                ending = Ending(group=change.group, value=change.value)
                facts.append(Fact("", "", "health", 0.9, 0.8, ends=[ending]))
    return facts


def _statement(change: Change) -> Fact:
    value, group = change.value, change.group
    zh = re.search(r"[\u3400-\u9fff]", value) is not None
    templates = {
        "allergy": ("用户对{}过敏。", "The user is allergic to {}."),
        "medication": ("用户在服用{}。", "The user takes {}."),
        "condition": ("用户患有{}。", "The user has {}."),
    }
    if value.isupper() and len(value) > 3:  # "its PEANUTS"
        value = value.lower()
    statement = templates[group][0 if zh else 1].format(value)
    return Fact(statement, f"{group}:{value_key(value)}", "health", 0.9, 0.9)


_ALLERGY = re.compile(
    r"allerg\w*\b(?!\s+rhinitis)|\breact(?:s|ed|ion)?\s+to\b|过敏(?!性)|过敏原", re.I
)


def _values(sentence: str, group: str, *, allergy: bool = False) -> list[tuple[str, int]]:
    """The known values of `group` in the sentence, with where each starts; an allergen
    only where the sentence (or, `allergy`, the turn before it) speaks of allergy."""
    lowered = sentence.lower()
    if group == "allergy" and not (allergy or _ALLERGY.search(lowered)):
        return []
    found: list[tuple[str, int]] = []
    for phrase in _phrases(group):
        for match in re.finditer(rf"(?<![a-z]){re.escape(phrase)}(?![a-z])", lowered):
            found.append((sentence[match.start() : match.end()], match.start()))
    for match in re.finditer(r"[a-z][a-z'-]*", lowered):
        word = match.group()
        known = (
            len(word) > 2 and word not in vocabulary.NOT_A_VALUE and vocabulary.CHECKS[group](word)
        )
        if known and not any(start <= match.start() < start + len(v) for v, start in found):
            found.append((sentence[match.start() : match.end()], match.start()))
    for name in _zh_names(group):
        for match in re.finditer(rf"(?:[\u4e00-\u9fff]{{1,2}}性)?{re.escape(name)}", sentence):
            if not any(start <= match.start() < start + len(v) for v, start in found):
                found.append((match.group(), match.start()))
    return sorted(found, key=lambda pair: pair[1])


def _phrases(group: str) -> tuple[str, ...]:
    return vocabulary.CONDITION_PHRASES_EN if group == "condition" else ()


def _zh_names(group: str) -> tuple[str, ...]:
    # The longest first, so that "抑郁症" is read before "抑郁".
    return tuple(sorted(vocabulary.zh_names(group), key=len, reverse=True))


def _stops(sentence: str, value: str, at: int, group: str) -> bool:
    before = sentence[max(0, at - _WINDOW) : at]
    after = sentence[at + len(value) : at + len(value) + _WINDOW]
    if re.search(r"[\u3400-\u9fff]", value):
        if group == "allergy" and re.match(_STOP_AFTER_ZH_ALLERGY, after):
            return True
        return bool(re.search(_STOP_BEFORE_ZH, before) or re.match(_STOP_AFTER_ZH, after))
    if group == "allergy" and re.match(_STOP_AFTER_EN_ALLERGY, after, re.I):
        return True
    for cue, cue_group in _STOP_BEFORE_EN:
        if cue_group == group and re.search(cue, before, re.I):
            return True
    return re.match(_STOP_AFTER_EN, after, re.I) is not None


def _starts(sentence: str, value: str, at: int) -> bool:
    before = sentence[max(0, at - _WINDOW) : at]
    after = sentence[at + len(value) : at + len(value) + _WINDOW]
    if re.search(r"[\u3400-\u9fff]", value):
        return re.search(_START_BEFORE_ZH, before) is not None
    return bool(re.search(_START_BEFORE_EN, before, re.I) or re.match(_START_AFTER_EN, after, re.I))


def _starts_alone(sentence: str, at: int) -> bool:
    before = sentence[max(0, at - _WINDOW) : at]
    return bool(re.search(_START_ALONE_EN, before, re.I) or re.search(_START_ALONE_ZH, before))
