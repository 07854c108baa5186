"""Doubt: a turn that puts a current fact in question without saying what holds instead.

"My allergist says I've outgrown it", "my doctor took me off the pills", "that's my brother,
not me": each touches a fact already stored, with a change cue the rules cannot resolve to a
new value. Guessing would leave a wrong fact current or invent an end; instead the turn
*disputes* the facts it touches, and a person decides (the review queue).

A dispute names the facts it touches: those of a health group (allergy, medication,
condition), narrowed to a value when the turn names a known one (`vocabulary`), or, for a
denied attribution, the facts the speaker's previous statement gave. A change cue is strong
("outgrown", "took me off", "misdiagnosed", "tested negative") or weak ("my doctor says",
"turns out"): a weak one counts only with a negation beside it in the same sentence.

Pure: no Django, no database.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from apps.facts import vocabulary

HEALTH_GROUPS = ("allergy", "medication", "condition")


@dataclass(frozen=True)
class Dispute:
    """Current facts a turn puts in doubt: those of `group`, narrowed to those that speak of
    `value` when given; or (`last_said`) those the speaker's previous statement gave."""

    group: str = ""
    value: str = ""
    last_said: bool = False


RELATIONS_EN = (
    r"(?:wife|husband|partner|boyfriend|girlfriend|mother|mom|mum|father|dad|sister|brother"
    r"|son|daughter|kid|child|baby|grandmother|grandma|grandfather|grandpa|aunt|uncle|cousin"
    r"|niece|nephew|friend|roommate|flatmate|colleague|coworker|twin)"
)
_RELATIONS_ZH = (
    r"(?:姐姐|妹妹|哥哥|弟弟|妈妈|母亲|爸爸|父亲|老婆|妻子|太太|丈夫|老公|男朋友|女朋友|儿子|女儿"
    r"|孩子|朋友|室友|同事|爷爷|奶奶|外公|外婆)"
)

# A relation as said in speech, short forms first ("我妈", "我哥": a mother, a brother).
RELATIONS_ZH_SHORT = rf"(?:{_RELATIONS_ZH[3:-1]}|妈|爸|姐|妹|哥|弟|媳妇)"

STRONG_EN = re.compile(
    r"\boutgr[eo]wn?\b|\boutgrowing\b"
    r"|\b(?:took|take|taken|taking|takes)\s+me\s+off\b"
    r"|\b(?:wean(?:ed|ing)?|tapered|tapering|coming|came|come)\s+(?:me\s+)?off\b"
    r"|\bmisdiagnos\w*|\btested\s+negative\b|\bfalse\s+alarm\b"
    r"|\b(?:tests?|results?|scans?|blood\s*work)\s+(?:came\s+back|were|was|are|is)\s+"
    r"(?:negative|clear|normal)\b",
    re.I,
)
WEAK_EN = re.compile(
    r"\b(?:doctor|doc|gp|allergist|dermatologist|cardiologist|specialist|nurse|pharmacist"
    r"|psychiatrist|physician|consultant)\s+(?:says|said|thinks|thought|told\s+me|reckons)\b"
    r"|\bturns?\s+out\b|\bturned\s+out\b|\bnot\s+sure\b|\bno\s+longer\s+sure\b"
    r"|\bwrong\s+about\b|\bmight\s+have\s+been\s+wrong\b",
    re.I,
)
NEGATION_EN = re.compile(
    r"\b(?:not|no|never|off|stop|stopped|anymore|longer|isn't|aren't|wasn't|don't|doesn't"
    r"|didn't|won't|can't|negative)\b|n't\b",
    re.I,
)
NOT_ME_EN = re.compile(
    rf"\b(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:actually\s+|really\s+)?my\s+{RELATIONS_EN}"
    rf"\b[^.!?]*\bnot\s+(?:me|mine)\b"
    rf"|\bmy\s+{RELATIONS_EN}'s\s+[^.!?]*\bnot\s+mine\b"
    rf"|\b(?:is|are|was|were)\s+(?:actually\s+|really\s+)?(?:my\s+{RELATIONS_EN}'s|[a-z]+'s)"
    rf"(?:\s|\W)[^.!?]*\bnot\s+(?:mine|me)\b"
    rf"|\bnot\s+me\s*[,;:-]+\s*(?:it'?s\s+|that'?s\s+)?my\s+{RELATIONS_EN}\b"
    rf"|\bi\s+meant\s+my\s+{RELATIONS_EN}\b",
    re.I,
)
TOPICS_EN = {
    "allergy": re.compile(r"\ballerg\w*\b(?!\s+(?:rhinitis|asthma))", re.I),
    "medication": re.compile(
        r"\b(?:meds?|medications?|medicines?|pills?|prescriptions?|tablets?|dose|doses|inhaler"
        r"|insulin|drugs?)\b",
        re.I,
    ),
    "condition": re.compile(r"\bdiagnos\w*|\bcondition\b", re.I),
}

STRONG_ZH = re.compile(r"停药|停了|不用(?:再)?吃|不再吃|别再吃|误诊|阴性|脱敏|减药|撤药")
WEAK_ZH = re.compile(r"医生说|大夫说|医生觉得|医生告诉我|其实|原来|不确定|说不定|好像|可能")
NEGATION_ZH = re.compile(r"不|没|别|停|无")
NOT_ME_ZH = re.compile(
    rf"(?:那|这)(?:是|说的是)我{_RELATIONS_ZH}[^。！？]*不是我|不是我[，,、]?(?:是|而是)我{_RELATIONS_ZH}"
    rf"|我说的是我{_RELATIONS_ZH}|(?:不对|说错|搞错|弄错)[^。！？]{{0,6}}?是我{RELATIONS_ZH_SHORT}|是我{RELATIONS_ZH_SHORT}[^。！？]{{0,12}}?[，,]?\s*不是我(?![的们])"
)
TOPICS_ZH = {
    "allergy": re.compile(r"过敏(?!性)"),
    "medication": re.compile(r"药"),
    "condition": None,
}

# Sentences, and clauses joined by a contrast ("I take metformin but they took me off the
# insulin": the doubt is the second clause's alone).
_SENTENCES = re.compile(r"(?<=[.!?。！？；;])\s*|\n+|\s*\bbut\b\s*|但是|不过(?!敏)|可是")
_WORDS = re.compile(r"[a-z][a-z'-]*|[\u3400-\u9fff]+")


def disputes_of(text: str, resolved: Callable[[str, str], bool]) -> list[Dispute]:
    """The disputes a turn raises, none that `resolved(group, value)` (value "" for the
    whole group): what the turn's rules already set or ended there, the turn said what
    holds, and nothing is in doubt."""
    found: list[Dispute] = []
    for sentence in _SENTENCES.split(text):
        if not sentence.strip():
            continue
        if NOT_ME_EN.search(sentence) or NOT_ME_ZH.search(sentence):
            found.append(Dispute(last_said=True))
            continue
        if not cued(sentence):
            continue
        for group in HEALTH_GROUPS:
            values = _values(sentence, group)
            if values:
                found.extend(
                    Dispute(group, value) for value in values if not resolved(group, value)
                )
            elif _topic(sentence, group) and not resolved(group, ""):
                found.append(Dispute(group=group))
    unique: list[Dispute] = []
    for dispute in found:
        if dispute not in unique:
            unique.append(dispute)
    return unique


# Cues that deny the fact itself was ever true (not a change to it): a fact the rules read
# from the same sentence is what is denied, not what holds.
DENIAL = re.compile(r"\bmisdiagnos\w*|\btested\s+negative\b|\bfalse\s+alarm\b|误诊|阴性", re.I)


def asserted_in_doubt(statement: str, group: str, text: str) -> bool:
    """Whether a health fact the rules read from `text` is the very thing a sentence of it
    denies ("医生说我对花生过敏可能是误诊": not an allergy to peanuts, a doubt about it)."""
    if group not in HEALTH_GROUPS:
        return False
    return any(
        value in statement
        for sentence in _SENTENCES.split(text)
        if sentence.strip() and DENIAL.search(sentence)
        for value in _values(sentence, group)
    )


def cued(sentence: str) -> bool:
    """Whether the sentence carries a change cue: a strong one, or a weak one beside a
    negation."""
    if STRONG_EN.search(sentence) or STRONG_ZH.search(sentence):
        return True
    if WEAK_EN.search(sentence):
        return NEGATION_EN.search(WEAK_EN.sub(" ", sentence)) is not None
    if WEAK_ZH.search(sentence):
        return NEGATION_ZH.search(WEAK_ZH.sub(" ", sentence)) is not None
    return False


def cued_anywhere(text: str) -> bool:
    """Whether any sentence (or contrasted clause) of the text carries a change cue."""
    return any(cued(part) for part in _SENTENCES.split(text) if part.strip())


def _topic(sentence: str, group: str) -> bool:
    zh = TOPICS_ZH[group]
    return bool(TOPICS_EN[group].search(sentence) or (zh is not None and zh.search(sentence)))


def _values(sentence: str, group: str) -> list[str]:
    """The known values of `group` the sentence names ("peanuts", "metformin", "哮喘")."""
    if group == "allergy" and not _topic(sentence, "allergy"):
        return []  # "off the metformin" names a drug, not an allergen
    check = vocabulary.CHECKS[group]
    values: list[str] = []
    for word in _WORDS.findall(sentence.lower()):
        if word in vocabulary.NOT_A_VALUE:
            continue
        if re.match(r"[\u3400-\u9fff]", word):
            values.extend(v for v in vocabulary.zh_names(group) if v in word)
        elif len(word) > 2 and check(word):
            values.append(word)
    return list(dict.fromkeys(values))
