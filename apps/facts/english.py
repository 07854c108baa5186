"""The English rules: a clause's subject, its rule table (pattern, kind) and the builders
that turn a match into facts (pure: no Django, no database).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apps.facts import vocabulary
from apps.facts.grammar import (
    CONDITION,
    DEMONYM,
    DIETS,
    FOOD_GROUPS,
    MARITAL,
    NOT_NAME,
    NOT_OCCUPATION,
    PETS,
    PLURAL_RELATIONS,
    RELATIONS,
    SELF,
    TYPED_CONDITION,
    ClauseState,
    Ending,
    Fact,
    Who,
    stems,
    value_key,
)
from apps.facts.time_words import apply_time, take_time

# --- English --------------------------------------------------------------------------------

_CONTRACTIONS = [
    (r"\bI'm\b", "I am"), (r"\bI've\b", "I have"), (r"\bI'll\b", "I will"),
    (r"\bI'd\b", "I would"), (r"\bcan't\b", "cannot"), (r"\bwon't\b", "will not"),
    (r"n't\b", " not"), (r"\b(it|he|she|that|there)'s\b", r"\1 is"),
    (r"\b(we|they|you)'re\b", r"\1 are"), (r"\b(we|they|you)'ve\b", r"\1 have"),
    (r"\bgonna\b", "going to"), (r"\bim\b", "I am"), (r"\bwanna\b", "want to"),
    (r"\bname's\b", "name is"),
    (r"\b(mom|mum|dad|sister|brother|wife|husband|son|daughter|friend|partner)'s\s+(?=an?\s|\w+ing\b)",
     r"\1 is "),
    (r"^(mom|mum|dad|mother|father)\b", r"my \1"),
]  # fmt: skip
_CONTRACTIONS_RE = [(re.compile(p, re.I), r) for p, r in _CONTRACTIONS]
# Verbs a chat turn starts a clause with, its subject dropped ("moved to Tucson, quit ...").
_DROPPED = (
    "moved|relocated|quit|left|started|got|went|became|switched|adopted|booked|finished"
    "|stopped|joined|retired|married|cancell?ed|had to cancel|gave up|took up|turned|cut|no more"
    "|named|called|taking|live in|living in|based in|handed in|put in|jumped ship"
)
CLAUSES = re.compile(
    r"(?<=[.!?])\s+|\n+|;\s*|:\s+(?=i\b)"
    r"|,?\s+(?:and|but|so|because|since|while|though|although|whereas|plus)\s+"
    r"(?=(?:now\s+|also\s+|then\s+|actually\s+|currently\s+|recently\s+|just\s+)?"
    r"(?:i|my|it|she|he|they|we)\b)"
    r"|,\s*(?=(?:and\s+|but\s+|now\s+|actually\s+|also\s+|instead\s+)*"
    r"(?:i|my|it is|its|it was|she|he|they|we|can you|could you|would you|do you|any)\b)"
    r"|,\s*(?=(?:moved|relocated|quit|retired|live|living|based|working|work)\s"
    r"+(?:up\s+|back\s+|over\s+)?(?:in|to|at|as|from)\b)"
    r"|\s+[—–]\s+|\s+-\s+|,\s*so\s+(?!that\b|much\b|many\b|far\b)"
    r"|,\s*(?=(?-i:[A-Z])[\w'-]+\s+(?:is|are)\s+(?:just\s+|only\s+)?where\b)"
    r"|,\s*(?=(?:and|but)\s+(?:now|then)\b)"
    # chat drops the subject: "moved to Tucson, quit teaching, and ..."
    r"|,?\s+and\s+(?=(?:then\s+|now\s+|also\s+|just\s+)?(?:"
    + _DROPPED
    + r"|works|lives|has|work|live)\b)"
    r"|,\s*(?=(?:and\s+)?(?:then\s+|now\s+|also\s+|just\s+)?(?:" + _DROPPED + r")\b)",
    re.I,
)
_LEAD = re.compile(
    r"^(?:(?:hi|hello|hey|well|oh|so|and|but|also|yes|yeah|ok|okay|um|uh|btw|by the way|anyway"
    r"|honestly|basically|fyi|oops|haha|lol|then|plus|welp|ugh|wow|yay|omg|guess what|news"
    r"|(?:\w+\s+){0,2}(?:update|news)|quick thing|fun fact|plot twist|confession"
    r"|small confession|so anyway|anyway|autocorrect|typo|my bad|ugh|whoops|oh no)\b[\s,!.:-]*)+",
    re.I,
)
_FRAME = re.compile(
    r"^(?:(?:it\s+)?turns out|apparently|it seems|i (?:just\s+)?(?:realized|realised|found out"
    r"|learned|learnt|noticed|remembered)|(?:the|my)\s+\w+\s+(?:said|says"
    r"|told me|thinks|confirmed)|to be honest|honestly|for the record|just so you know|fun fact)"
    r"(?:\s+that)?[\s,:]*",
    re.I,
)
_CORRECTION = re.compile(
    r"^(?:actually|correction|sorry|no(?=\s*[,!.:;-])|nope|wait|i mean(?=\s*,)"
    r"|i meant(?=\s*,)|to be clear|update|scratch that"
    r"|let me correct (?:that|myself)|i was wrong)\b[\s,!.:;-]*",
    re.I,
)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|probably|might|i think|not sure|possibly)\b", re.I)
_SUBJECT = re.compile(
    rf"^(?:(?P<self>i|we)\b|my\s+(?P<rel>{RELATIONS})(?:'s)?\b(?:\s*,?\s*(?P<relname>(?-i:[A-Z])[a-z]+)"
    r"(?=\s+(?:is|was|has|lives|works|just|recently|moved|got|loves|likes|hates|does|did|will"
    r"|plans|wants))\s*,?)?)",
    re.I,
)
_VALUE_END = re.compile(
    r"\s*(?:,|\bbecause\b|\bsince\b|\bwhich\b|\bwho\b|\bwhere\b|\bbut\b|\bso\b|\bthough\b|\bif\b"
    r"|\bwhen\b|\bas well\b|\bthat is\b|\bright\b|\bthough\b|!|\?|$)",
    re.I,
)
NAME = r"(?P<name>(?-i:[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2}))"
_NAMES = r"(?-i:[A-Z][\w'-]+)(?:\s*(?:,|\band\b|&)\s*(?-i:[A-Z][\w'-]+))*"


_VALUE_END_KEEP_COMMAS = re.compile(
    r"\s*(?:,\s*(?:but|and|because|which|so)\b|\bbecause\b|\bwhich\b|\bbut\b|\bso\b|!|\?|$)",
    re.I,
)


_FILLER_END = re.compile(
    r"(?:[\s,]+(?:btw|by the way|haha+|hah|lol|lmao|tbh|fyi|so yeah|yay|omg|ugh|rn"
    r"|at all|for good|for real|you know|obviously|ofc|ngl|lmk|tho|though|anyway|i guess"
    r"|now i guess)|[\s,]*(?::\)|:\(|:D|[\U0001F300-\U0001FAFF"
    r"\u2600-\u27BF\uFE0F]+))+[\s.!]*$",
    re.I,
)


def _clean_value(value: str, commas: bool = False) -> str:
    value = (_VALUE_END_KEEP_COMMAS if commas else _VALUE_END).split(value, maxsplit=1)[0]
    value = _FILLER_END.sub("", value)
    value = re.sub(
        r"(?:\s+(?:now|again|too|as well|instead|anyway|these days|though|after all|at all|for now"
        r"|there|here|i guess|lol|haha"
        r"|either|anymore|any more|any longer))+$",
        "",
        value,
        flags=re.I,
    )
    return value.strip(" .,;:!-\"'")


def expand_contractions(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    for pattern, replacement in _CONTRACTIONS_RE:
        text = pattern.sub(replacement, text)
    return text


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def as_sentence(text: str) -> str:
    text = re.sub(r"\s{2,}", " ", text).strip()
    return _cap(text if text.endswith((".", "!", "。")) else text + ".")


@dataclass
class _Rule:
    pattern: re.Pattern[str]
    build: object  # (match, who, negated) -> list[Fact]


def _p(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.I)


# The English rule table: (pattern over the predicate, the kind of fact its builder in
# _BUILDERS makes); the first match wins.
_NEG = r"(?P<neg>not\s+|no\s+longer\s+|never\s+)?"
_BE = r"(?:am|is|are|have been|has been)\s+"
_DRUG = (
    r"[\w-]+(?:pril|sartan|olol|statin|pine|formin|azole|cillin|mycin|oxetine|aline|pam"
    r"|lam|zide|prazole|tidine|profen|amine|ine|ide|one|mab|nib|xaban|gliptin|lukast)"
)
_RULES: list[tuple[re.Pattern[str], str]] = [
    (_p(r"^(?:react|reacts|am reacting|break out)\s+(?:badly\s+)?to\s+(?P<v>.+)"), "allergy"),
    (
        _p(
            r"^(?:went|became|turned|switched to|have gone|has gone|am going|is going"
            r"|went back)"
            rf"\s+(?:fully\s+|full\s+|completely\s+|totally\s+)?(?:an?\s+)?(?P<v>{DIETS})\b"
        ),
        "diet",
    ),
    (
        _p(
            r"^(?:am|is|are)\s+(?:still\s+)?(?:out\s+|over\s+|back\s+|based\s+|stuck\s+)?in\s+"
            r"(?P<v>(?-i:[A-Z][a-z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]+)*"
            r"|(?-i:[a-z])[\w.'-]+(?:\s+(?-i:[a-z])[\w.'-]+){0,2})"
        ),
        "home",
    ),
    # "left Spotify, I'm at Shopify now": being at a place says where one works only
    # right after leaving an employer (`ClauseState.left_employer`); alone ("I'm at Home
    # Depot looking for paint") it says nothing of work.
    (
        _p(
            r"^(?:am|is)\s+(?:now\s+)?at\s+(?P<v>(?-i:[A-Z])[\w&'.-]*(?:\s+(?-i:[A-Z])[\w&'.-]*)*)"
            r"(?:\s+now)?(?:,.*)?$"
        ),
        "employer-after-leaving",
    ),
    (
        _p(
            r"^(?:started|start|am starting|began|begun)\s+(?:taking|on)\s+"
            r"(?P<v>(?!an?\b|the\b|my\b|some\b)[\w-]+)"
        ),
        "medication",
    ),
    (_p(rf"^(?:am|is)\s+(?:now\s+)?on\s+(?P<v>{_DRUG})\b"), "medication"),
    (
        _p(
            r"^(?:am\s+|is\s+)?taking\s+(?P<v>(?!an?\b|the\b|my\b|some\b|care\b|time\b|a\b)[\w-]+)"
            r"(?=\s+\d+\s*(?:mg|mcg|g|ml|iu)\b|\s+(?:daily|every|each|twice|once|for)\b|\s*$)"
        ),
        "medication",
    ),
    (
        _p(
            r"^(?:am|is|came|come|coming|finished tapering|tapered|tapering|went|got|am now)"
            r"\s+(?:completely\s+|fully\s+|finally\s+)?off\s+(?:the\s+|my\s+)?"
            r"(?P<v>(?!over\b|for\b|it\b|of\b|them\b|that\b)[\w-]+)"
        ),
        "medication-stop",
    ),
    (_p(r"^(?:named|called)\s+(?:him|her|it|them)\s+" + NAME), "pet-named"),
    (
        _p(
            r"^(?:just\s+|finally\s+|officially\s+|recently\s+)?(?:got\s+)?"
            rf"(?P<v>married|engaged|divorced)\b(?:\s+to\s+{NAME})?"
        ),
        "marital",
    ),
    (
        _p(
            r"^(?:booked|planned|scheduled|arranged|signed up for|registered for|enrolled in)"
            r"\s+(?:a\s+|my\s+|our\s+|the\s+)?(?P<v>.+)"
        ),
        "booked",
    ),
    (
        _p(
            r"^(?:had to\s+|have to\s+|going to\s+|will\s+|need to\s+)?(?:cancel|cancell?ed"
            r"|call off|called off|postpone|postponed|scrap|scrapped)\s+"
            r"(?:my\s+|our\s+|the\s+)?(?P<v>.+)"
        ),
        "cancel",
    ),
    (
        _p(
            r"^(?:have|has)?\s*(?:gone|went|go)\s+off\s+(?P<v>.+)"
            r"|^(?:am|is)\s+(?:so\s+)?(?:over|done with|sick of|tired of)\s+(?P<v2>.+)"
        ),
        "gone-off",
    ),
    (_p(r"^(?:am|is)\s+(?:an?\s+)(?P<v>[\w-]+)\s+(?:person|fan|lover|addict)\b"), "person"),
    (_p(r"^(?:officially|now|just turned|turning|turned)\s+(?P<v>\d{1,3})\b"), "age"),
    (
        _p(
            rf"^(?:{_BE})?{_NEG}(?:severely\s+|very\s+|mildly\s+)?(?:allergic"
            r"|intolerant)\s+to\s+(?P<v>.+)"
        ),
        "allergy",
    ),
    (
        _p(
            rf"^(?:do\s+|does\s+)?{_NEG}(?:have|has)\s+(?:an?\s+)?(?P<v>[\w-]+(?:\s+[\w-]+)?)\s+(?:allergy"
            r"|intolerance)"
        ),
        "allergy",
    ),
    (_p(r"^(?:am|is|was)\s+called\s+" + NAME), "name"),
    (_p(r"^(?:go|goes)\s+by\s+" + NAME), "name"),
    (
        _p(r"^(?:got|was|were|have been|has been)\s+(?:fired|laid off|let go|made redundant)\b"),
        "fired",
    ),
    (_p(r"^(?:lost)\s+(?:my|his|her|their)\s+job\b"), "fired"),
    (
        _p(
            r"^(?:do\s+|does\s+)?(?:not|no\s+longer)\s+(?:have"
            rf"|has|own|owns)\s+(?:an?\s+|the\s+|my\s+)?(?P<species>{PETS})\b"
        ),
        "pet-gone",
    ),
    (_p(rf"^{_BE}{_NEG}(?:an?\s+|strictly\s+|fully\s+|now\s+)*(?P<v>{DIETS})\b"), "diet"),
    (_p(rf"^{_BE}(?:on|following)\s+an?\s+(?P<v>[\w-]+)\s+diet"), "diet"),
    (_p(rf"^no\s+more\s+(?P<v>(?:{FOOD_GROUPS})\b)"), "diet-not"),
    (_p(rf"^(?:cut|cutting)\s+(?:out\s+)?(?P<v>(?:{FOOD_GROUPS})\b)"), "diet-stop"),
    (
        _p(
            r"^(?:do\s+|does\s+)?(?P<neg>not\s+|no\s+longer\s+"
            rf"|never\s+)(?:eat|eats|drink|drinks)\s+(?P<v>(?:{FOOD_GROUPS})\b.*)"
        ),
        "diet-not",
    ),
    (
        _p(rf"^(?:stopped|quit|gave up)\s+(?:eating|drinking)\s+(?P<v>(?:{FOOD_GROUPS})\b.*)"),
        "diet-stop",
    ),
    (
        _p(r"^(?:have|has)\s+(?:just\s+)?(?:moved|relocated)\s+(?:back\s+)?(?:in)?to\s+(?P<v>.+)"),
        "home",
    ),
    (
        _p(
            rf"^(?:do\s+|does\s+)?{_NEG}(?:live|lives|am living|is living"
            r"|are living|reside|resides|am based|is based|am staying"
            r"|is staying|just moved|moved|relocated|moved back)\s+"
            r"(?:back\s+|put\s+|up\s+|down\s+|over\s+|out\s+)?(?:in"
            r"|to|at)\s+(?P<v>.+)"
        ),
        "home",
    ),
    (_p(r"^(?:am|is|are)\s+(?:originally\s+)?from\s+(?P<v>.+)"), "origin"),
    (
        _p(
            rf"^(?:do\s+|does\s+)?{_NEG}(?:work|works|am working"
            r"|is working|started working|started a new job|got a (?:new\s+)?job"
            r"|have been working|has been working)\s+(?:\w+ly\s+"
            r"|full[- ]time\s+|part[- ]time\s+|now\s+)?as\s+(?:an?\s+)?(?P<v>.+)"
        ),
        "job",
    ),
    (
        _p(
            rf"^(?:do\s+|does\s+)?{_NEG}(?:work|works|am working"
            r"|is working|started working|got a (?:new\s+)?job"
            r"|have been working|has been working|started at)\s+(?:at"
            r"|for)\s+(?P<v>.+)"
        ),
        "employer",
    ),
    # "Joined Stripe": a named organisation, not a club, group or congregation joined.
    (
        _p(
            r"^(?:joined)\s+(?P<v>(?-i:[A-Z])(?!.*\b(?:club|group|community|church|team"
            r"|class|gym|league|choir|band|society|association|circle|crew|squad)\b).+)"
        ),
        "employer",
    ),
    (_p(r"^(?:am|is|are)\s+(?:now\s+)?retired\b"), "retired"),
    (_p(r"^(?:retired|have retired|has retired)\b"), "retired"),
    (_p(r"^(?:stopped|quit)\s+taking\s+(?P<v>.+)"), "medication-stop"),
    (
        _p(
            r"^(?:quit|resigned|handed in my notice|gave notice|gave my notice)\s*$"
            r"|^(?:handed|put)\s+in\s+my\s+(?:notice|two\s+weeks|resignation)\b"
        ),
        "fired",
    ),
    (
        _p(
            r"^(?:got|was|been)\s+(?:poached|hired|headhunted|recruited|snapped up)"
            r"\s+by\s+(?P<v>.+)"
        ),
        "employer",
    ),
    # "just finished my first week at Shopify", "jumped ship to KPMG"
    (
        _p(
            r"^(?:just\s+)?(?:finished|started|survived|did|had|completed|on)\s+my\s+"
            r"(?:first|second|third)\s+(?:day|week|month)\s+at\s+(?P<v>(?-i:[A-Z])[\w&'.-]+"
            r"(?:\s+(?-i:[A-Z])[\w&'.-]+)*)"
        ),
        "employer",
    ),
    (
        _p(
            r"^(?:accepted|took|got|signed)\s+(?:an?\s+|the\s+)?(?:job\s+)?offer\s+(?:from|at|with)\s+"
            r"(?P<v>[\w&'.-]+(?:\s+(?-i:[A-Z])[\w&'.-]+)*)"
        ),
        "employer",
    ),
    (
        _p(r"^jumped\s+ship\s+to\s+(?P<v>(?-i:[A-Z])[\w&'.-]+(?:\s+(?-i:[A-Z])[\w&'.-]+)*)\s*$"),
        "employer",
    ),
    (
        _p(r"^(?:am|is)\s+(?:so\s+|totally\s+)?(?:obsessed with|hooked on|into)\s+(?P<v>.+)"),
        "come-around",
    ),
    (_p(r"^switched\s+to\s+(?P<v>(?!an?\b|the\b)[\w -]+)"), "switched-to"),
    (_p(r"^(?:started|starting|start|began)\s+as\s+(?:an?\s+)?(?P<v>.+)"), "job"),
    (
        _p(
            r"^got\s+(?:the|a|my)\s+(?P<v>(?-i:[A-Z])[\w&'-]+(?:\s+(?-i:[A-Z])[\w&'-]+)*)\s+"
            r"(?:job|offer|position|role)\b"
        ),
        "employer",
    ),
    (
        _p(r"^(?:flying|heading|going|travell?ing|driving|moving)\s+(?:back\s+)?to\s+(?P<v>.+)"),
        "plan-to",
    ),
    (
        _p(
            r"^(?:quit|left|lost|stopped|gave up|resigned from|was fired from"
            r"|got fired from|got laid off from|retired from)\s+(?:my\s+job\s+(?:as"
            r"|at)\s+(?:an?\s+)?|working\s+(?:as|at|for)\s+(?:an?\s+)?"
            r"|being\s+an?\s+|(?:my|his|her|their)\s+)?(?P<v>.+)"
        ),
        "quit",
    ),
    (
        _p(
            r"^(?:am|is|are)\s+(?:no\s+longer|not)\s+(?:an?\s+)(?P<v>.+?)(?:\s+(?:anymore"
            r"|any more|any longer))?$"
        ),
        "no-longer",
    ),
    (_p(rf"^{_BE}(?P<neg>not\s+)?(?P<v>{MARITAL})\b(?:\s+to\s+{NAME})?"), "marital"),
    (
        _p(
            r"^(?:got|just got|recently got)\s+(?P<v>married|engaged"
            rf"|divorced|separated)\b(?:\s+to\s+{NAME})?"
        ),
        "marital",
    ),
    (
        _p(
            r"^(?:have|has|got|adopted|just got|bought)\s+(?:an?"
            r"|one|two|three|four|\d+|a\s+new|another)\s+(?:new\s+"
            rf"|little\s+|pet\s+|rescue\s+|\w+\s+)?(?P<species>{PETS})\b(?:\s*,?\s*(?:named"
            rf"|called)?\s*(?P<names>{_NAMES}))?"
        ),
        "pet",
    ),
    (
        _p(
            r"^(?:have|has)\s+(?:an?|one|two|three|four|\d+|no)\s+(?:older\s+"
            r"|younger\s+|little\s+|big\s+|twin\s+)?(?P<rel>sisters?"
            r"|brothers?|sons?|daughters?|kids|children|child|siblings"
            rf"|grandchildren)\b(?:\s*,?\s*(?:named|called)\s+{NAME})?"
        ),
        "family",
    ),
    (
        _p(
            r"^(?:do\s+|does\s+)?(?P<neg>not\s+|no\s+longer\s+)(?:have"
            rf"|has|suffer from|suffers from)\s+(?P<v>{TYPED_CONDITION})"
        ),
        "condition",
    ),
    (
        _p(
            r"^(?:(?:have|has|get|gets|suffer from|suffers from)\s+(?P<v>" + TYPED_CONDITION + r")"
            r"|(?:was|were|got|have been|has been|just got|just been)\s+diagnosed\s+with\s+"
            r"(?P<v2>[\w' -]{3,40}))"
        ),
        "condition",
    ),
    (
        _p(
            rf"^{_BE}{_NEG}(?P<v>diabetic|asthmatic|epileptic|pregnant"
            r"|anemic|anaemic|celiac|coeliac|lactose intolerant)\b"
        ),
        "condition-adj",
    ),
    (
        _p(
            r"^(?:do\s+|does\s+)?(?P<neg>not\s+|no\s+longer\s+)(?:take"
            r"|takes|am taking|is taking|am on|is on)\s+(?P<v>[\w-]+(?:\s+[\w-]+)?)"
            r"(?:\s+(?:medication"
            r"|meds|pills|tablets)|$)"
        ),
        "medication",
    ),
    (
        _p(
            r"^(?:take|takes|am taking|is taking|am on|is on)\s+(?P<v>[\w-]+)\s+for\s+"
            r"(?:my\s+)?"
            rf"(?P<cond>{TYPED_CONDITION})"
        ),
        "medication-for",
    ),
    (
        _p(
            r"^(?:take|takes|am taking|is taking|started taking)"
            r"\s+(?P<v>[\w-]+(?:\s+[\w-]+)?)(?:\s+(?:every|each|twice|once|in the|at night"
            r"|medication"
            r"|meds|pills|tablets|daily|every day|for)|$)"
        ),
        "medication",
    ),
    (
        _p(
            r"^(?:do\s+|does\s+|would\s+)?(?P<neg>not\s+|no\s+longer\s+)?(?:really\s+"
            r"|absolutely\s+|totally\s+|also\s+|still\s+)?(?P<verb>love"
            r"|loves|like|likes|enjoy|enjoys|prefer|prefers|adore"
            r"|adores|hate|hates|dislike|dislikes|cannot stand|can not stand"
            r"|am into|is into|am a (?:big |huge )?fan of|is a (?:big "
            r"|huge )?fan of)\s+(?P<v>.+)"
        ),
        "opinion",
    ),
    (
        _p(
            r"^(?:am|is|are)\s+(?P<neg>not\s+)?(?:going|planning"
            r"|hoping|about|scheduled|set)\s+to\s+(?P<v>.+)"
        ),
        "plan",
    ),
    (
        _p(
            r"^(?:will|plan to|plans to|intend to|intends to|want to"
            r"|wants to|would like to|hope to|hopes to|am going to"
            r"|is going to|have to|need to)\s+(?P<v>.+)"
        ),
        "plan",
    ),
    (
        _p(
            r"^(?:am|is|are)\s+(?:flying|travell?ing|heading|driving"
            r"|moving|visiting|leaving|starting|attending|getting married|having)\b(?P<v>.*)"
        ),
        "plan-progressive",
    ),
    (_p(r"^(?:cancell?ed|called off|postponed)\s+(?:my\s+|our\s+|the\s+)?(?P<v>.+)"), "cancel"),
    (
        _p(
            rf"^(?:have\s+|has\s+)?(?:gone back to|went back to|started|start|am|is|began)"
            rf"\s+eating\s+(?P<v>(?:{FOOD_GROUPS})\b)"
        ),
        "diet-eat",
    ),
    (_p(rf"^(?:eat|eats)\s+(?P<v>(?:{FOOD_GROUPS})\b)\s+again"), "diet-eat"),
    (_p(rf"^(?:eat|eats)\s+(?P<v>(?:{DIETS})\b)"), "diet-eat"),
    (
        _p(r"^(?:have\s+|has\s+)?(?:come|came|coming)\s+around\s+(?:on|to)\s+(?P<v>.+)"),
        "come-around",
    ),
    (
        _p(r"^(?:manage|manages|run|runs|own|owns|opened)\s+(?P<v>(?:a|an|the|my)\s+.+)"),
        "manage",
    ),
    (
        _p(
            r"^(?:starting|start|started|will start|am starting|starts)"
            r"\s+(?:a\s+new\s+job\s+)?at\s+"
            r"(?P<v>(?-i:[A-Z]).+)"
        ),
        "employer",
    ),
    (
        _p(
            r"^(?:got into|got accepted (?:in)?to|was accepted (?:in)?to"
            r"|were accepted (?:in)?to"
            r"|got admitted to|was admitted to|got a place (?:at|on))\s+(?P<v>.+)"
        ),
        "admitted",
    ),
    (
        _p(
            r"^(?:went|travell?ed|flew|visited|attended|graduated"
            r"|finished|completed|ran|won|got back|came back|returned"
            r"|started|bought|sold|met|had|adopted|celebrated|took)\b(?P<v>.*)"
        ),
        "event",
    ),
    (_p(r"^(?:speak|speaks)\s+(?P<v>.+)"), "language"),
    (
        _p(r"^(?:study|studies|am studying|is studying|majored in|major in)\s+(?P<v>.+)"),
        "study",
    ),
    (_p(r"^(?:play|plays)\s+(?P<v>.+)"), "hobby"),
    (_p(r"^(?:am|is|are)\s+(?P<v>\d{1,3})(?:\s+years?\s+old)?\s*$"), "age"),
    (_p(r"^(?:am|is|are)\s+(?P<v>(?!going\b|dying\b)[a-z]+ing\b.+)"), "activity"),
    (_p(r"^(?:just\s+)?turned\s+(?P<v>\d{1,3})\b"), "age"),
    (
        _p(
            r"^(?:am|is)\s+(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+){0,2})"
            r"\s*(?:$|,|!|\.|\s+(?:and|btw|here|by the way|nice|from|if)\b)"
        ),
        "name-bare",
    ),
    (
        _p(
            r"^(?:am|is|are|have been|has been)\s+(?:now\s+)?(?P<neg>not\s+)?(?:an?\s+)"
            r"(?P<v>[\w &'-]{2,60})"
        ),
        "identity",
    ),
]


_MY_THING = re.compile(
    rf"^my\s+(?:(?P<rel>{RELATIONS})'s\s+)?(?P<attr>(?:favou?rite\s+)?[a-z]+(?:\s+[a-z]+)?)\s+"
    r"(?:is|are|was)\s+(?P<v>.+)",
    re.I,
)
_MY_PET = re.compile(
    rf"^my\s+(?:new\s+|little\s+)?(?P<species>{PETS})(?:'s name is"
    rf"|\s+is\s+(?:named|called)|,)?\s+{NAME}"
    r"(?:\s+(?P<pred>.+))?$",
    re.I,
)
_IT_IS = re.compile(
    r"^(?:it is|it was|its|it is actually|rather|but|only|just|instead(?:\s+it is)?)\s+(?P<v>.+)",
    re.I,
)
_NOW_A = re.compile(r"^(?:now\s+)?(?:i am\s+)?(?:an?\s+)?(?P<v>[\w -]{2,40})\s+now$", re.I)


_LATER_SUBJECT = re.compile(rf"(?<=[\s,:;!-])(?:i|we|my\s+(?:{RELATIONS}))\b", re.I)
_ELIDED = re.compile(
    r"^(?:just\s+|finally\s+|also\s+|recently\s+|officially\s+)*(?:moved|relocated|quit|left"
    r"|starting|start|got into|gone back|manage|run|taking|work|live|allergic|flying|heading"
    r"|going|travell?ing|driving|diagnosed|first week|last shift|his name|her name"
    r"|started|got|went|became|switched|adopted|booked|finished|stopped|joined|married|engaged"
    r"|divorced|turned|retired|cancell?ed|had to cancel|gave up|lost|works|lives|is|has|likes"
    r"|loves|hates|tapered|tapering|cut out|no more|took up|named|called|handed in|put in"
    r"|jumped ship|accepted)\b",
    re.I,
)
_REPLACEMENTS = [
    # "it's Joan, not Jon", "I meant Oakland, not Berkeley"
    re.compile(
        r"^(?:it\s+is|its|i\s+meant|i\s+mean|meant|that\s+should\s+be|should\s+be)\s+"
        r"(?P<new>[\w' -]{1,40}?),?\s+not\s+(?P<old>[\w' -]{1,40}?)\s*(?:,|$)",
        re.I,
    ),
    # "not Jon, Joan", "not celiac, just a gluten sensitivity"
    re.compile(
        r"^(?:it\s+is\s+)?not\s+(?P<old>[\w' -]{1,40}?),?\s+(?:it\s+is\s+|but\s+|just\s+|only\s+)*"
        r"(?P<new>(?!that\b)[\w' -]{1,40}?)\s*(?:,|$)",
        re.I,
    ),
    # "(the doctor) switched me from lisinopril to amlodipine"
    re.compile(
        r"^(?:\w+\s+){0,3}?(?:switched|changed|moved)\s+(?:me\s+|it\s+)?(?:from|off)\s+"
        r"(?P<old>[\w' -]{1,40}?)\s+(?:on)?to\s+(?P<new>[\w' -]{1,40}?)"
        r"\s*(?:,|$|\s+(?:bc|because|since|as|due|after|for|cause|cuz)\b)",
        re.I,
    ),
]


_NOT_A_THING = {"i", "we", "he", "she", "it", "they", "that", "this", "everything", "all"}


def _whole_clause(clause: str, correction: bool, carry: ClauseState) -> list[Fact] | None:
    """Clauses whose subject is the thing itself: "it's almonds I react to", "walnuts are
    fine", "Pickle passed away", "swimming is my thing now"."""
    conf = 0.9 if correction else 0.8
    for part in (
        _whole_clause_1,
        _whole_clause_2,
        _whole_clause_3,
        _whole_clause_4,
    ):
        result = part(clause, correction, carry, conf)
        if result is not None:
            return result
    return None


def _whole_clause_1(
    clause: str, correction: bool, carry: ClauseState, conf: float
) -> list[Fact] | None:
    """_whole_clause's rules, part 1 of 4: None when none matches."""
    if m := re.match(
        r"^it\s+is\s+(?:actually\s+|really\s+|only\s+)?(?P<v>[\w -]{2,40}?)\s+(?:that\s+)?i\s+"
        r"(?:am\s+)?"
        r"(?:allergic\s+to|react\s+to"
        r"|cannot\s+eat|can not\s+eat)$",
        clause,
        re.I,
    ):
        value = m.group("v")
        slot = f"allergy:{value_key(value)}"
        return [Fact(as_sentence(f"The user is allergic to {value}"), slot, "health", conf, 0.95)]
    if m := re.match(
        r"^(?P<v>[\w -]{2,40}?)\s+(?:is|are)\s+(?:totally\s+|completely\s+|perfectly\s+|actually\s+"
        r"|absolutely\s+)*(?:fine|ok|okay|safe)(?:\s+for\s+me)?$",
        clause,
        re.I,
    ):
        value = re.sub(
            r"^(?:the\s+)?(?:other|all other|any other)\s+", "", m.group("v"), flags=re.I
        )
        if value.lower() not in _NOT_A_THING:
            return [Fact("", "", "health", conf, 0.9, ends=[Ending(group="allergy", value=value)])]
    if m := re.match(
        r"^(?:we\s+|i\s+)?(?:had\s+to\s+)?put\s+(?P<v2>\w+)\s+down\b"
        r"|^(?:my\s+|our\s+)?(?:\w+\s+)?(?P<v>\w+)\s+(?:passed away|died|was put down|ran away"
        r"|is gone|crossed the rainbow bridge)\b",
        clause,
        re.I,
    ):
        value = m.group("v") or m.group("v2")
        if value.lower() not in _NOT_A_THING and value.lower() not in _relation_words():
            return [Fact("", "", "fact", conf, 0.6, ends=[Ending(group="pet", value=value)])]
    if m := re.search(rf"\brenamed\s+(?:the|my|our|him|her|it)\s*(?P<v>{PETS})?", clause, re.I):
        carry.species = (m.group("v") or carry.species or "pet").lower()
        carry.renaming = True
        return [Fact("", "", "fact", conf, 0.6, ends=[Ending(group="pet", value=carry.species)])]
    if carry.renaming and (
        m := re.match(r"^(?:now\s+)?(?:he|she|it)\s+is\s+(?:called\s+)?" + NAME, clause, re.I)
    ):
        name, species = m.group("name"), carry.species or "pet"
        text = f"The user has a {species} named {name}"
        return [Fact(as_sentence(text), f"pet:{value_key(name)}", "fact", conf, 0.7)]
    if m := re.match(
        rf"^my\s+(?:current|new|present)\s+(?P<species>{PETS})\s+is\s+(?:called\s+|named\s+)?"
        + NAME,
        clause,
        re.I,
    ):
        species, name = m.group("species").lower(), m.group("name")
        ends = [Ending(group="pet", value=species)]
        text = f"The user has a {species} named {name}"
        return [Fact(as_sentence(text), f"pet:{value_key(name)}", "fact", conf, 0.7, ends=ends)]
    return None


def _whole_clause_2(
    clause: str, correction: bool, carry: ClauseState, conf: float
) -> list[Fact] | None:
    """_whole_clause's rules, part 2 of 4: None when none matches."""
    if m := re.match(
        r"^my\s+(?:only\s+|real\s+|actual\s+)?allerg(?:y|ies)\s+(?:is|are)\s+(?:to\s+)?"
        r"(?P<v>[\w -]+?)(?:,?\s+not\s+(?:to\s+)?(?P<old>[\w -]+))?$",
        clause,
        re.I,
    ):
        value = m.group("v")
        slot = f"allergy:{value_key(value)}"
        ends = [Ending(slot=f"allergy:{value_key(m.group('old'))}")] if m.group("old") else []
        text = f"The user is allergic to {value}"
        return [Fact(as_sentence(text), slot, "health", conf, 0.95, ends=ends)]
    if m := re.match(
        rf"^(?:so\s+)?(?:i\s+am\s+|now\s+)?(?:an?\s+)?(?P<v>{DIETS})(?:\s+now)?(?:\s+i\s+guess)?\??$",
        clause,
        re.I,
    ):
        return [Fact(as_sentence(f"The user is {m.group('v').lower()}"), "diet", "fact", conf, 0.8)]
    if m := re.match(r"^(?:his|her|its)\s+name\s+is\s+" + NAME, clause, re.I):
        species = carry.species or "pet"
        name = m.group("name")
        return [
            Fact(
                as_sentence(f"The user has a {species} named {name}"),
                f"pet:{value_key(name)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if m := re.search(
        r"\bfirst\s+(?:week|day|month|shift)\s+at\s+(?P<v>(?-i:[A-Z])[\w&' -]+?)"
        r"(?:\s+done|\s+over|$)",
        clause,
        re.I,
    ):
        return [
            Fact(as_sentence(f"The user works at {m.group('v')}"), "employer", "fact", conf, 0.75)
        ]
    if m := re.search(r"\bno\s+more\s+(?P<v>\w+ing)\b", clause, re.I):
        return [Fact("", "", "fact", conf, 0.6, ends=[Ending(value=m.group("v"))])]
    if m := re.match(
        r"^(?P<v>(?:type\s+\d\s+)?diabetic|asthmatic|celiac|coeliac|epileptic|anemic|anaemic|pregnant"
        r"|(?:lactose|gluten) intolerant)$",
        clause,
        re.I,
    ):
        value = m.group("v").lower()
        slot = f"condition:{value_key(value)}"
        return [Fact(as_sentence(f"The user is {value}"), slot, "health", conf, 0.9)]
    if m := re.match(
        r"^(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)*)\s+is\s+(?:just\s+|only\s+)?where\s+"
        r"(?:i|we)\s+(?P<verb>work|study)",
        clause,
        re.I,
    ):
        verb = "works" if m.group("verb").lower() == "work" else "studies"
        text = f"The user {verb} in {m.group('v')}"
        return [Fact(as_sentence(text), f"{m.group('verb').lower()}place", "fact", conf, 0.7)]
    return None


def _whole_clause_3(
    clause: str, correction: bool, carry: ClauseState, conf: float
) -> list[Fact] | None:
    """_whole_clause's rules, part 3 of 4: None when none matches."""
    if m := re.search(
        r"\boutgrown\s+(?:the\s+|my\s+|an?\s+)?(?P<v>[\w -]{2,30}?)\s+(?:allergy|intolerance)",
        clause,
        re.I,
    ):
        slot = f"allergy:{value_key(m.group('v'))}"
        return [Fact("", slot, "health", conf, 0.9, ends=[Ending(slot=slot)])]
    if m := re.search(r"\b(?:came back\s+)?negative\s+for\s+(?P<v>[\w' -]{2,30})", clause, re.I):
        return [
            Fact("", "", "health", conf, 0.9, ends=[Ending(group="condition", value=m.group("v"))])
        ]
    if m := re.match(
        r"^(?:his|her|its|my|the)\s+name\s+is\s+(?P<new>(?-i:[A-Z])[\w'-]*),?\s+not\s+(?P<old>(?-i:[A-Z])[\w'-]*)$",
        clause,
        re.I,
    ):
        return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]
    if correction and (m := re.match(r"^(?P<new>\d{1,3}),?\s+not\s+(?P<old>\d{1,3})$", clause)):
        return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]
    if m := re.search(
        r"\b(?:rehomed?|gave away|give away|found a new home for|had to give up|gave up)\s+"
        r"(?:my\s+|our\s+)?(?P<v>[\w'-]+)",
        clause,
        re.I,
    ):
        return [Fact("", "", "fact", conf, 0.6, ends=[Ending(group="pet", value=m.group("v"))])]
    if m := re.search(
        r"\blast\s+(?:shift|day|week)\s+(?:at|with)\s+(?P<v>[\w' &-]+)", clause, re.I
    ):
        value = _clean_value(m.group("v"))
        ends = [Ending(slot="employer", value=value), Ending(slot="job")]
        return [Fact("", "", "fact", conf, 0.7, ends=ends)]
    if m := re.search(
        r"\b(?:first|second|third)\s+(?:week|day|month|shift)\s+as\s+(?:an?\s+)?(?P<job>[\w -]+?)"
        r"\s+(?:at|for)\s+(?P<org>[\w' &-]+)",
        clause,
        re.I,
    ):
        job = _build_job(SELF, m.group("job"), conf)
        org = _clean_value(m.group("org"))
        text = f"The user works at {org}"
        return [job, Fact(as_sentence(text), "employer", "fact", conf, 0.75)]
    if m := re.match(
        r"^(?:the\s+|my\s+|our\s+)?(?P<v>[\w' -]{2,40}?)\s+(?:got|was|has been|is|have been)"
        r"\s+(?:cancell?ed|called off|postponed|scrapped)\b",
        clause,
        re.I,
    ):
        return [Fact("", "", "plan", conf, 0.6, ends=[Ending(group="plan", value=m.group("v"))])]
    return None


def _whole_clause_4(
    clause: str, correction: bool, carry: ClauseState, conf: float
) -> list[Fact] | None:
    """_whole_clause's rules, part 4 of 4: None when none matches."""
    if m := re.search(
        r"\b(?:put|started|switched|moved|changed)\s+me\s+(?P<how>on(?:to)?|to|over to)\s+"
        r"(?P<v>(?!an?\b|the\b)[\w-]+)(?:\s+for\s+(?P<cond>[\w ]{3,40}))?",
        clause,
        re.I,
    ):
        value = m.group("v")
        slot = f"medication:{value_key(value)}"
        ends = [Ending(group="medication")] if m.group(0).lower().startswith("switched") else []
        facts = [Fact(as_sentence(f"The user takes {value}"), slot, "health", conf, 0.9, ends=ends)]
        cond = (m.group("cond") or "").strip()
        if cond and CONDITION.fullmatch(cond):
            text = f"The user has {cond}"
            facts.append(
                Fact(as_sentence(text), f"condition:{value_key(cond)}", "health", conf, 0.9)
            )
        return facts
    if m := re.match(
        r"^(?:the\s+)?(?P<v>[\w -]{2,30}?)\s+(?:allergy|intolerance)\s+is\s+(?:my|his|her|their)\s+"
        r"\w+'s,?\s+not\s+mine",
        clause,
        re.I,
    ):
        slot = f"allergy:{value_key(m.group('v'))}"
        return [Fact("", slot, "health", 0.9, 0.9, ends=[Ending(slot=slot)])]
    if m := re.search(
        r"\b(?:officially|just turned|turned|turning|am now|i am)\s+(?P<v>[1-9]\d)\b"
        r"(?!\s*(?:minutes|hours|days|weeks|months|%|am|pm|times|of|people|years? ago))",
        clause,
        re.I,
    ):
        text = f"The user is {m.group('v')} years old"
        return [Fact(as_sentence(text), "age", "fact", conf, 0.6)]
    if m := re.search(
        r"\b(?:an?|the)\s+(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)\s+(?:resident|local)\b",
        clause,
        re.I,
    ):
        value = m.group("v")
        ends = [Ending(group="plan", value=value)]
        return [
            Fact(as_sentence(f"The user lives in {value}"), "home", "fact", conf, 0.8, ends=ends)
        ]
    if m := re.match(
        r"^(?P<v>[\w -]{2,40}?)\s+is\s+(?:totally\s+)?my\s+(?:new\s+)?(?:thing|jam|passion"
        r"|favou?rite thing|obsession)\b",
        clause,
        re.I,
    ):
        value = m.group("v")
        if value.lower() not in _NOT_A_THING:
            text = f"The user likes {value}"
            return [Fact(as_sentence(text), f"opinion:{value_key(value)}", "preference", conf, 0.6)]
    return None


def _replacement(clause: str, correction: bool) -> Fact | None:
    for pattern in _REPLACEMENTS:
        match = pattern.match(clause)
        if match:
            old, new = _clean_value(match.group("old")), _clean_value(match.group("new"))
            new = re.sub(r"^(?:an?|the)\s+", "", new, flags=re.I)
            old = re.sub(r"^(?:an?|the)\s+", "", old, flags=re.I)
            if re.match(r"(?:i|we|my|it|he|she|they)\b", new, re.I):
                continue  # a clause of its own: "I meant I live in Oakland, not ..."
            if old and new and old.lower() != new.lower() and stems(old):
                return Fact("", "", "correction", 0.9, 0.8, replace=(old, new))
    return None


def _is_occupation(value: str) -> bool:
    """A job title whose head noun is a known occupation (`vocabulary`), not a word that only
    looks like one ("a professional overthinker", "an expert hiker")."""
    return vocabulary.names_an_occupation(value) and not NOT_OCCUPATION.search(value.lower())


def bare_name(value: str) -> bool:
    words = value.split()
    return (
        0 < len(words) <= 3
        and all(w[0].isupper() for w in words)
        and not DEMONYM.match(value)
        and not NOT_NAME.match(value)
    )


_ADVERBS = re.compile(
    r"\b(?:actually|honestly|definitely|officially|even|still|currently|also|just|really|finally"
    r"|fully|completely|obviously|basically|apparently"
    r"|recently|already|both|strictly|only|totally|absolutely|literally|basically|seriously"
    r"|truly|now)\s+",
    re.I,
)


def _english_facts(clause: str, who: Who, carry: ClauseState, correction: bool) -> list[Fact]:
    pred = clause
    for pattern, kind in _RULES:
        match = pattern.search(pred)
        if not match:
            continue
        if kind == "employer-after-leaving":
            if not carry.left_employer:
                continue
            kind = "employer"
        facts = _build(kind, match, who, correction, carry)
        if facts is None:
            continue
        if any(
            e.slot.endswith("employer") or e.group.endswith("employer")
            for f in facts
            for e in f.ends
        ):
            carry.left_employer = True
        negated = match.groupdict().get("neg")
        if negated and kind in ("allergy", "home", "job", "employer", "diet", "condition",
                                "condition-adj", "medication", "opinion", "marital"):  # fmt: skip
            carry.negated = (kind, who)
        return facts
    return []


_LIVING = re.compile(
    r"^(?:do\s+|does\s+)?(?:not\s+|no\s+longer\s+|never\s+)?(?:live|lives|am living"
    r"|is living|are living|reside|resides|am staying|is staying)\b",
    re.I,
)
_BEING_IN = re.compile(r"^(?:am|is|are)\s", re.I)
_FOR_SO_LONG = re.compile(
    r"\s+for\s+(?:\d+|a few|many|several|some|ages|years)\s*(?:years?|yrs?|months?|weeks?)?"
    r"(?:\s+now)?$",
    re.I,
)
_WITH_WHOM = re.compile(r"\s+with\s+(?:my|our|his|her|their|the)\b.*$", re.I)
_PLACE_NAME = re.compile(r"(?-i:\b[A-Z][\w'.-]+)")
_PASSING_STAY = re.compile(
    r"\b(?:hotel|hostel|airbnb|tonight|this week(?:end)?|for the (?:night|week(?:end)?|holidays?)"
    r"|for (?:a|two|three|a few) (?:days|nights|weeks)|on (?:holiday|vacation|a trip))\b",
    re.I,
)


def _value(match: re.Match[str], group: str = "v") -> str:
    return _clean_value(match.group(group) or "")


def _build_job(who: Who, value: str, conf: float) -> Fact:
    article = "an" if value[:1].lower() in "aeiou" else "a"
    text = f"{who.name} {who.verb('works', 'work')} as {article} {value}"
    return Fact(as_sentence(text), f"{who.prefix}job", "fact", conf, 0.75)


_WHOLE_DIET = re.compile(rf"^(?:so\s+)?(?:an?\s+)?(?:{DIETS})\b", re.I)


@dataclass(frozen=True)
class _Matched:
    """A rule's match, and what every builder reads of it: the rule's kind, the match and
    its groups, whom the clause is about (`p`: their slot prefix), whether the clause
    corrects an earlier one, the turn's carried state, a negation, the confidence."""

    kind: str
    m: re.Match[str]
    who: Who
    correction: bool
    carry: ClauseState
    g: dict[str, Any]
    negated: bool
    p: str
    conf: float


def _build(
    kind: str, m: re.Match[str], who: Who, correction: bool, carry: ClauseState
) -> list[Fact] | None:
    """The facts a rule's match states (its builder, by the rule's kind), or None."""
    g = m.groupdict()
    negated = bool((g.get("neg") or "").strip())
    matched = _Matched(
        kind, m, who, correction, carry, g, negated, who.prefix, 0.9 if correction else 0.8
    )
    builder = _BUILDERS.get(kind)
    return builder(matched) if builder is not None else None


# Where a value's noun phrase ends and the sentence goes on ("tree nuts after all, it was").
_PHRASE_END = re.compile(
    r"\b(?:after|any\s?more|it|its|was|is|but|so|because|since|though|now)\b|[^\w\s,'&-]", re.I
)


def _build_allergy(c: _Matched) -> list[Fact] | None:
    """The facts of the "allergy" rule."""
    m, who, carry, negated, p, conf = c.m, c.who, c.carry, c.negated, c.p, c.conf
    value = _value(m)
    if not value:
        return None
    values = [v for v in re.split(r"\s*(?:,|\band\b|&|\bor\b)\s*", value) if v.strip()]
    facts = []
    for one in values:
        slot = f"{p}allergy:{value_key(one)}"
        if negated:  # "not allergic to tree nuts after all": the known allergens it names
            head = _PHRASE_END.split(one, maxsplit=1)[0]
            named = vocabulary.allergens_named(head)
            ends = [Ending(group=f"{p}allergy", value=v) for v in named] or [Ending(slot=slot)]
            facts.append(Fact("", slot, "health", conf, 0.9, ends=ends))
            continue
        text = f"{who.name} {who.verb('is', 'are')} allergic to {one}"
        facts.append(Fact(as_sentence(text), slot, "health", conf, 0.95))
    if facts and not negated and carry.only:
        facts[0].ends.append(Ending(group=f"{p}allergy"))
    return facts


def _build_name(c: _Matched) -> list[Fact] | None:
    """The facts of the "name" / "name-bare" rules."""
    kind, who, g, p, conf = c.kind, c.who, c.g, c.p, c.conf
    name = (g.get("name") or g.get("v") or "").strip()
    if kind == "name-bare" and not bare_name(name):
        return None
    name = _clean_value(name)
    if not name:
        return None
    text = f"{who.name}'s name is {name}" if who.prefix else f"The user's name is {name}"
    return [Fact(as_sentence(text), f"{p}name", "fact", conf, 0.9)]


def _build_diet(c: _Matched) -> list[Fact] | None:
    """The facts of the "diet" rule."""
    m, who, negated, p, conf = c.m, c.who, c.negated, c.p, c.conf
    value = _value(m).lower()
    if negated:
        return [
            Fact("", f"{p}diet", "fact", conf, 0.8, ends=[Ending(slot=f"{p}diet", value=value)])
        ]
    text = (
        f"{who.name} {who.verb('is', 'are')} {value}"
        if "diet" not in value
        else f"{who.name} follows a {value}"
    )
    return [Fact(as_sentence(text), f"{p}diet", "fact", conf, 0.8)]


def _build_diet_not(c: _Matched) -> list[Fact] | None:
    """The facts of the "diet-not" / "diet-stop" rules."""
    m, who, p, conf = c.m, c.who, c.p, c.conf
    value = _value(m)
    value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
    verb = "drink" if "alcohol" in value else "eat"
    text = f"{who.name} {who.verb('does', 'do')} not {verb} {value}"
    return [Fact(as_sentence(text), f"{p}diet", "fact", conf, 0.8)]


def _build_home(c: _Matched) -> list[Fact] | None:
    """The facts of the "home" rule."""
    m, who, negated, p, conf = c.m, c.who, c.negated, c.p, c.conf
    value = _WITH_WHOM.sub("", _value(m))  # "Leeds with my partner": the place is Leeds
    if not value or value.lower() in ("here", "there", "it", "this", "that"):
        return None
    # "Live in" takes a named place ("Leeds", "a small town near Leeds"): "live in the
    # past", "live in this hoodie" name none. A night's stay is not a home.
    weak = _LIVING.match(m.group(0)) or _BEING_IN.match(m.group(0))
    if _PASSING_STAY.search(m.string):
        return None
    if not _PLACE_NAME.search(value):  # "i live in glasgow": as the place is written
        place = vocabulary.place_named(value)
        if place is None and weak:
            return None  # "live in the past": a known place only
        value = place or value
    if negated:
        return [
            Fact("", f"{p}home", "fact", conf, 0.8, ends=[Ending(slot=f"{p}home", value=value)])
        ]
    text = f"{who.name} {who.verb('lives', 'live')} in {value}"
    # A planned move that happened is no longer a plan.
    ends = [Ending(group=f"{p}plan", value=value)]
    return [Fact(as_sentence(text), f"{p}home", "fact", conf, 0.8, ends=ends)]


def _build_origin(c: _Matched) -> list[Fact] | None:
    """The facts of the "origin" rule."""
    m, who, p, conf = c.m, c.who, c.p, c.conf
    value = _value(m)
    return (
        [
            Fact(
                as_sentence(f"{who.name} {who.verb('is', 'are')} from {value}"),
                f"{p}origin",
                "fact",
                conf,
                0.7,
            )
        ]
        if value
        else None
    )


def _build_job_or_employer(c: _Matched) -> list[Fact] | None:
    """The facts of the "job" / "employer" rules."""
    kind, m, who, negated, p, conf = c.kind, c.m, c.who, c.negated, c.p, c.conf
    value = _value(m)
    value = re.sub(r"^(?:an?|the)\s+", "", value) if kind == "job" else value
    if not value:
        return None
    if negated:
        return [
            Fact(
                "",
                f"{p}{kind}",
                "fact",
                conf,
                0.7,
                ends=[Ending(slot=f"{p}{kind}", value=value)],
            )
        ]
    if kind == "employer" and (
        split := re.match(r"^(?P<org>.+?)\s+as\s+(?:an?\s+)?(?P<job>.+)$", value)
    ):
        org = f"{who.name} {who.verb('works', 'work')} at {split.group('org')}"
        return [
            Fact(as_sentence(org), f"{p}employer", "fact", conf, 0.75),
            _build_job(who, split.group("job"), conf),
        ]
    extra: list[Fact] = []
    place = re.search(
        r"\s+(?:here\s+|out\s+|over\s+|up\s+|down\s+)?in\s+"
        r"(?P<place>(?-i:[A-Z][a-z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]+)*)$",
        value,
    )
    if place:  # "... here in Cardiff": where they live too
        value = value[: place.start()]
        text = f"{who.name} {who.verb('lives', 'live')} in {place.group('place')}"
        extra.append(Fact(as_sentence(text), f"{p}home", "fact", conf, 0.75))
    if kind == "job":
        split = re.match(r"^(?P<job>.+?)\s+(?:at|for|with)\s+(?P<org>.*(?-i:[A-Z]).*)$", value)
        if split:
            job = _build_job(who, split.group("job"), conf)
            org = f"{who.name} {who.verb('works', 'work')} at {split.group('org')}"
            return [job, Fact(as_sentence(org), f"{p}employer", "fact", conf, 0.75), *extra]
        article = "an" if value[:1].lower() in "aeiou" else "a"
        text = f"{who.name} {who.verb('works', 'work')} as {article} {value}"
    else:
        text = f"{who.name} {who.verb('works', 'work')} at {value}"
    return [Fact(as_sentence(text), f"{p}{kind}", "fact", conf, 0.75), *extra]


def _build_pet_named(c: _Matched) -> list[Fact] | None:
    """The facts of the "pet-named" rule."""
    who, carry, g, p, conf = c.who, c.carry, c.g, c.p, c.conf
    name = g["name"]
    text = f"{who.name} {who.verb('has', 'have')} a {carry.species or 'pet'} named {name}"
    return [Fact(as_sentence(text), f"{p}pet:{value_key(name)}", "fact", conf, 0.7)]


def _build_booked(c: _Matched) -> list[Fact] | None:
    """The facts of the "booked" rule."""
    m, who, p = c.m, c.who, c.p
    value = _value(m)
    if len(value.split()) < 2:
        return None
    text = f"{who.name} booked {value}"
    return [Fact(as_sentence(text), f"{p}plan:{value_key(value)}", "plan", 0.75, 0.6)]


def _build_gone_off(c: _Matched) -> list[Fact] | None:
    """The facts of the "gone-off" rule."""
    g, p, conf = c.g, c.p, c.conf
    value = _clean_value(g.get("v") or g.get("v2") or "")
    if not value:
        return None
    return [Fact("", "", "preference", conf, 0.6, ends=[Ending(group=f"{p}opinion", value=value)])]


def _build_person(c: _Matched) -> list[Fact] | None:
    """The facts of the "person" rule."""
    who, g, p, conf = c.who, c.g, c.p, c.conf
    value = g["v"]
    if value.lower() in ("people", "morning", "night", "cat", "dog") or DEMONYM.match(value):
        if value.lower() in ("cat", "dog"):
            text = f"{who.name} {who.verb('is', 'are')} a {value.lower()} person"
            return [
                Fact(as_sentence(text), f"{p}opinion:{value_key(value)}", "preference", conf, 0.5)
            ]
        return None
    text = f"{who.name} {who.verb('likes', 'like')} {value}"
    return [Fact(as_sentence(text), f"{p}opinion:{value_key(value)}", "preference", conf, 0.6)]


def _build_medication_for(c: _Matched) -> list[Fact] | None:
    """The facts of the "medication-for" rule."""
    m, who, g, p, conf = c.m, c.who, c.g, c.p, c.conf
    value, cond = _value(m), g["cond"]
    return [
        Fact(
            as_sentence(f"{who.name} {who.verb('takes', 'take')} {value}"),
            f"{p}medication:{value_key(value)}",
            "health",
            conf,
            0.9,
        ),
        Fact(
            as_sentence(f"{who.name} {who.verb('has', 'have')} {cond}"),
            f"{p}condition:{value_key(cond)}",
            "health",
            conf,
            0.9,
        ),
    ]


def _build_switched_to(c: _Matched) -> list[Fact] | None:
    """The facts of the "switched-to" rule."""
    m, who, p, conf = c.m, c.who, c.p, c.conf
    value = _value(m)
    text = f"{who.name} switched to {value}"
    return [Fact(as_sentence(text), f"{p}habit:{value_key(value)}", "preference", conf, 0.5)]


def _build_come_around(c: _Matched) -> list[Fact] | None:
    """The facts of the "come-around" rule."""
    m, who, p, conf = c.m, c.who, c.p, c.conf
    value = _value(m)
    text = f"{who.name} {who.verb('likes', 'like')} {value}"
    return [Fact(as_sentence(text), f"{p}opinion:{value_key(value)}", "preference", conf, 0.6)]


def _build_diet_eat(c: _Matched) -> list[Fact] | None:
    """The facts of the "diet-eat" rule."""
    m, who, p, conf = c.m, c.who, c.p, c.conf
    value = _value(m)
    text = f"{who.name} {who.verb('eats', 'eat')} {value}"
    return [Fact(as_sentence(text), f"{p}diet", "fact", conf, 0.7)]


def _build_manage(c: _Matched) -> list[Fact] | None:
    """The facts of the "manage" rule."""
    m, who, p, conf = c.m, c.who, c.p, c.conf
    verb = m.group(0).split()[0].lower()
    verb = {"manage": "manages", "run": "runs", "own": "owns", "opened": "opened"}.get(verb, verb)
    text = f"{who.name} {verb} {_value(m)}"
    return [Fact(as_sentence(text), f"{p}job", "fact", conf, 0.7)]


def _build_admitted(c: _Matched) -> list[Fact] | None:
    """The facts of the "admitted" rule."""
    m, who, p, conf = c.m, c.who, c.p, c.conf
    value = _value(m)
    text = f"{who.name} got into {value}"
    return [Fact(as_sentence(text), f"{p}event:{value_key(value)}", "event", conf, 0.7)]


def _build_plan_to(c: _Matched) -> list[Fact] | None:
    """The facts of the "plan-to" rule."""
    m, who, p = c.m, c.who, c.p
    value = _value(m)
    verb = m.group(0).split()[0].lower()
    text = f"{who.name} {who.verb('is', 'are')} {verb} to {value}"
    return [Fact(as_sentence(text), f"{p}plan:{value_key(value)}", "plan", 0.75, 0.6)]


def _build_fired(c: _Matched) -> list[Fact] | None:
    """The facts of the "fired" rule."""
    p, conf = c.p, c.conf
    return [
        Fact(
            "",
            "",
            "fact",
            conf,
            0.7,
            ends=[Ending(slot=f"{p}job"), Ending(slot=f"{p}employer")],
        )
    ]


def _build_pet_gone(c: _Matched) -> list[Fact] | None:
    """The facts of the "pet-gone" rule."""
    g, p, conf = c.g, c.p, c.conf
    species = re.sub(r"s$", "", g["species"].lower())
    return [Fact("", "", "fact", conf, 0.6, ends=[Ending(group=f"{p}pet", value=species)])]


def _build_retired(c: _Matched) -> list[Fact] | None:
    """The facts of the "retired" rule."""
    who, p, conf = c.who, c.p, c.conf
    text = f"{who.name} {who.verb('is', 'are')} retired"
    return [
        Fact(as_sentence(text), f"{p}job", "fact", conf, 0.7, ends=[Ending(slot=f"{p}employer")])
    ]


def _build_quit(c: _Matched) -> list[Fact] | None:
    """The facts of the "quit" rule."""
    m, p, conf = c.m, c.p, c.conf
    value = _value(m)
    if not value:
        return None
    generic = re.match(
        r"^(?:(?:the|my|that|this)\s+)?(?:job|work|position|role|cafe|café|restaurant|bar"
        r"|shop|store|company|firm|office|hospital|clinic|school|bank|agency|startup|diner"
        r"|bakery|factory|warehouse|studio|lab|gig)\b",
        value,
        re.I,
    )
    if not generic and value[:1].isupper():  # an employer: the job there ends with it
        return [
            Fact(
                "",
                "",
                "fact",
                conf,
                0.7,
                ends=[Ending(slot=f"{p}job"), Ending(slot=f"{p}employer", value=value)],
            )
        ]
    if generic:
        ends = [Ending(slot=f"{p}job"), Ending(slot=f"{p}employer")]
    else:
        ends = [Ending(value=value, group=f"{p}job"), Ending(value=value, group=f"{p}employer")]
        ends += [Ending(value=value)]
    return [Fact("", "", "fact", conf, 0.7, ends=ends)]


def _build_no_longer(c: _Matched) -> list[Fact] | None:
    """The facts of the "no-longer" rule."""
    m, conf = c.m, c.conf
    value = _value(m)
    if not value:
        return None
    return [Fact("", "", "fact", conf, 0.7, ends=[Ending(value=value)])]


def _build_marital(c: _Matched) -> list[Fact] | None:
    """The facts of the "marital" rule."""
    who, g, negated, p, conf = c.who, c.g, c.negated, c.p, c.conf
    value = (g.get("v") or "").lower()
    partner = g.get("name")
    if negated:
        return [
            Fact(
                "",
                f"{p}marital",
                "relationship",
                conf,
                0.7,
                ends=[Ending(slot=f"{p}marital", value=value)],
            )
        ]
    text = f"{who.name} {who.verb('is', 'are')} {value}" + (f" to {partner}" if partner else "")
    ends = [Ending(group=f"{p}plan", value=value)]  # "getting married" happened
    return [Fact(as_sentence(text), f"{p}marital", "relationship", conf, 0.75, ends=ends)]


def _build_pet(c: _Matched) -> list[Fact] | None:
    """The facts of the "pet" rule."""
    who, carry, g, p, conf = c.who, c.carry, c.g, c.p, c.conf
    species = g["species"].lower()
    carry.species = re.sub(r"(?<!s)s$", "", species)
    names = re.split(r"\s*(?:,|\band\b|&)\s*", g.get("names") or "")
    names = [n for n in names if n and not NOT_NAME.match(n)]
    if len(names) > 1 or (names and species.endswith("s") and species != "fish"):
        species = re.sub(r"(?<!s)s$", "", species)
    if not names:
        text = f"{who.name} {who.verb('has', 'have')} a {species}"
        return [Fact(as_sentence(text), f"{p}pet:{value_key(species)}", "fact", conf, 0.7)]
    return [
        Fact(
            as_sentence(f"{who.name} {who.verb('has', 'have')} a {species} named {name}"),
            f"{p}pet:{value_key(name)}",
            "fact",
            conf,
            0.7,
        )
        for name in names
    ]


def _build_family(c: _Matched) -> list[Fact] | None:
    """The facts of the "family" rule."""
    m, who, g, p, conf = c.m, c.who, c.g, c.p, c.conf
    rel = g["rel"].lower()
    name = g.get("name")
    count = m.group(0).split()[1].lower()
    text = f"{who.name} {who.verb('has', 'have')} {count} {rel}" + (
        f" named {name}" if name else ""
    )
    return [
        Fact(
            as_sentence(text),
            f"{p}family:{value_key(rel)}:{value_key(name or '')}",
            "relationship",
            conf,
            0.7,
        )
    ]


def _build_condition(c: _Matched) -> list[Fact] | None:
    """The facts of the "condition" / "condition-adj" rules."""
    kind, m, who, g, negated, p, conf = c.kind, c.m, c.who, c.g, c.negated, c.p, c.conf
    value = _value(m) or _clean_value(g.get("v2") or "")
    key = value_key(value)
    slot = f"{p}condition:{key}"
    if negated:
        return [
            Fact(
                "",
                slot,
                "health",
                conf,
                0.9,
                ends=[Ending(slot=slot), Ending(group=f"{p}condition", value=value)],
            )
        ]
    if _FIGURATIVE_CONDITION.match(m.string[m.end() :]):
        return None  # "a cold brew", "pregnant with ideas": the word, not the condition
    verb = who.verb("is", "are") if kind == "condition-adj" else who.verb("has", "have")
    return [Fact(as_sentence(f"{who.name} {verb} {value}"), slot, "health", conf, 0.9)]


# What follows a condition's name when it names something else: a noun it qualifies ("a cold
# brew", "a cold shower"), or "pregnant with" anything but a child ("pregnant with ideas").
_FIGURATIVE_CONDITION = re.compile(
    r"^\s+(?!(?:and|or|but|again|now|right|at|since|for|so|too|still|which|that|lately"
    r"|recently|this|last|these|every|all|from|because|as|after|before|when|while|in|on"
    r"|with|though|anymore|myself|like|about|once|twice|every|most|a\s+lot)\b)[a-z]"
    r"|^\s+with\s+(?!(?:twins|triplets|a\s+(?:boy|girl|baby)|my|our|baby|number)\b)",
)


def _build_medication(c: _Matched) -> list[Fact] | None:
    """The facts of the "medication" / "medication-stop" rules."""
    kind, m, who, negated, p, conf = c.kind, c.m, c.who, c.negated, c.p, c.conf
    value = _value(m)
    slot = f"{p}medication:{value_key(value)}"
    if negated or kind == "medication-stop":
        return [
            Fact(
                "",
                slot,
                "health",
                conf,
                0.9,
                ends=[Ending(slot=slot), Ending(group=f"{p}medication", value=value)],
            )
        ]
    return [
        Fact(
            as_sentence(f"{who.name} {who.verb('takes', 'take')} {value}"),
            slot,
            "health",
            conf,
            0.9,
        )
    ]


def _build_opinion(c: _Matched) -> list[Fact] | None:
    """The facts of the "opinion" rule."""
    m, who, g, negated, p, conf = c.m, c.who, c.g, c.negated, c.p, c.conf
    value = _value(m)
    value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
    if not value or value.lower() in ("it", "that", "this", "them", "you", "to"):
        return None
    verb = g["verb"].lower()
    dislike = verb.startswith(("hate", "dislike", "cannot", "can not"))
    if negated:
        dislike = not dislike
    slot = f"{p}opinion:{value_key(value)}"
    if negated and not dislike:  # "I don't hate X anymore": the dislike ends
        return [Fact("", slot, "preference", conf, 0.6, ends=[Ending(slot=slot)])]
    if dislike and negated:
        text = f"{who.name} {who.verb('does', 'do')} not like {value}"
    elif dislike:
        text = f"{who.name} {who.verb('dislikes', 'dislike')} {value}"
    elif verb.startswith("prefer"):
        text = f"{who.name} {who.verb('prefers', 'prefer')} {value}"
    elif verb.startswith(("love", "adore")):
        text = f"{who.name} {who.verb('loves', 'love')} {value}"
    elif "fan" in verb or "into" in verb:
        text = f"{who.name} {who.verb('is', 'are')} a fan of {value}"
    else:
        text = f"{who.name} {who.verb('likes', 'like')} {value}"
    return [Fact(as_sentence(text), slot, "preference", conf, 0.6)]


def _build_plan(c: _Matched) -> list[Fact] | None:
    """The facts of the "plan" / "plan-progressive" rules."""
    kind, m, who, negated, p, conf = c.kind, c.m, c.who, c.negated, c.p, c.conf
    value = _value(m) if kind == "plan" else m.group(0).split(None, 1)[1]
    value = _clean_value(value) if kind == "plan-progressive" else value
    if not value or len(value) < 3:
        return None
    if negated:  # "I'm not going to Kyoto anymore": the plan ends
        value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
        return [Fact("", "", "plan", conf, 0.6, ends=[Ending(group=f"{p}plan", value=value)])]
    if kind == "plan":
        verb = m.group(0).split()[0].lower()
        lead = "is going to" if verb in ("am", "is", "are") else "plans to"
        text = f"{who.name} {lead} {value}"
    else:
        text = f"{who.name} {who.verb('is', 'are')} {value}"
    return [Fact(as_sentence(text), f"{p}plan:{value_key(value)}", "plan", 0.75, 0.6)]


def _build_cancel(c: _Matched) -> list[Fact] | None:
    """The facts of the "cancel" rule."""
    m, p, conf = c.m, c.p, c.conf
    value = _value(m)
    return [
        Fact(
            "",
            "",
            "plan",
            conf,
            0.6,
            ends=[
                Ending(
                    group=f"{p}plan",
                    value=re.sub(r"^(?:trip|plans?|visit|journey)\s+(?:to|for)\s+", "", value),
                )
            ],
        )
    ]


def _build_event(c: _Matched) -> list[Fact] | None:
    """The facts of the "event" rule."""
    m, who, g, p = c.m, c.who, c.g, c.p
    verb = m.group(0).split()[0]
    rest = _clean_value(g.get("v") or "")
    if len(rest) < 2 and verb.lower() not in ("graduated", "retired"):
        return None
    text = f"{who.name} {verb.lower()} {rest}".strip()
    # A plan that happened is no longer a plan: the event ends it.
    thing = re.split(r"\s+(?:in|at|on|with|for|after|before|by|last|this|yesterday)\b", rest)[0]
    ends = [Ending(group=f"{p}plan", value=thing)] if stems(thing) else []
    return [
        Fact(
            as_sentence(text),
            f"{p}event:{value_key(verb + ' ' + rest)}",
            "event",
            0.8,
            0.6,
            ends=ends,
        )
    ]


def _verb_fact(
    c: _Matched, verbs: tuple[str, str], slot: str, category: str, importance: float
) -> list[Fact] | None:
    """ "<who> <verb> <value>" in `slot` ("{key}" in it: the value's key), or None."""
    value = _value(c.m)
    if not value:
        return None
    text = f"{c.who.name} {c.who.verb(*verbs)} {value}"
    slot = c.p + slot.format(key=value_key(value))
    return [Fact(as_sentence(text), slot, category, c.conf, importance)]


def _build_language(c: _Matched) -> list[Fact] | None:
    """The facts of the "language" rule."""
    return _verb_fact(c, ("speaks", "speak"), "language:{key}", "fact", 0.5)


def _build_study(c: _Matched) -> list[Fact] | None:
    """The facts of the "study" rule."""
    return _verb_fact(c, ("studies", "study"), "study", "fact", 0.6)


def _build_hobby(c: _Matched) -> list[Fact] | None:
    """The facts of the "hobby" rule."""
    return _verb_fact(c, ("plays", "play"), "hobby:{key}", "preference", 0.5)


def _build_activity(c: _Matched) -> list[Fact] | None:
    """The facts of the "activity" rule."""
    m, who, p = c.m, c.who, c.p
    value = _value(m)
    if len(value.split()) < 2:
        return None
    text = f"{who.name} {who.verb('is', 'are')} {value}"
    return [Fact(as_sentence(text), f"{p}activity:{value_key(value)}", "fact", 0.75, 0.5)]


def _build_age(c: _Matched) -> list[Fact] | None:
    """The facts of the "age" rule."""
    who, g, p, conf = c.who, c.g, c.p, c.conf
    value = g["v"]
    return [
        Fact(
            as_sentence(f"{who.name} {who.verb('is', 'are')} {value} years old"),
            f"{p}age",
            "fact",
            conf,
            0.6,
        )
    ]


def _build_identity(c: _Matched) -> list[Fact] | None:
    """The facts of the "identity" rule."""
    m, who, negated, p, conf = c.m, c.who, c.negated, c.p, c.conf
    value = _value(m)
    if not value or re.search(r"\b(?:kind|type|sort) of\b", value, re.I):
        return None
    value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
    value = _FOR_SO_LONG.sub("", value)  # "a nurse at St Mary's for 12 years now"
    if re.match(r"(?:have|has)\s", m.group(0), re.I) and not _is_occupation(
        re.split(r"\s+(?:at|for|in|with)\s", value, maxsplit=1)[0]
    ):
        return None  # "have been a fan of jazz", "been a while": what one has been, a job
    if negated:
        return [Fact("", "", "fact", conf, 0.6, ends=[Ending(value=value)])]
    article = "an" if value[:1].lower() in "aeiou" else "a"
    split = re.match(r"^(?P<job>.+?)\s+(?P<prep>at|for|in|with)\s+(?P<where>.+)$", value)
    where = split.group("where") if split else ""
    if split and _is_occupation(split.group("job")) and not re.search(r"(?-i:[A-Z])", where):
        return [_build_job(who, split.group("job"), conf)]
    if split and _is_occupation(split.group("job")):
        job = _build_job(who, split.group("job"), conf)
        where = split.group("where")
        if split.group("prep") == "in":
            text = f"{who.name} {who.verb('lives', 'live')} in {where}"
            return [job, Fact(as_sentence(text), f"{p}home", "fact", conf, 0.75)]
        text = f"{who.name} {who.verb('works', 'work')} at {where}"
        return [job, Fact(as_sentence(text), f"{p}employer", "fact", conf, 0.75)]
    if _is_occupation(value):
        text = f"{who.name} {who.verb('works', 'work')} as {article} {value}"
        return [Fact(as_sentence(text), f"{p}job", "fact", conf, 0.7)]
    if _SELF_MOCKING.match(value):  # "a professional procrastinator", "basically a zombie"
        return None
    text = f"{who.name} {who.verb('is', 'are')} {article} {value}"
    return [Fact(as_sentence(text), "", "fact", 0.7, 0.5)]


_SELF_MOCKING = re.compile(
    r"(?:professional|certified|card-carrying|total|complete|absolute|walking|human|basically"
    r"|literally|such|bit\s+of|zombie\b|mess\b|disaster\b|potato\b|gremlin\b|goblin\b)",
    re.I,
)


# Each rule kind's builder: the rule table is _RULES (pattern, kind) with these.
_BUILDERS: dict[str, Callable[[_Matched], list[Fact] | None]] = {
    "allergy": _build_allergy,
    "name": _build_name,
    "name-bare": _build_name,
    "diet": _build_diet,
    "diet-not": _build_diet_not,
    "diet-stop": _build_diet_not,
    "home": _build_home,
    "origin": _build_origin,
    "job": _build_job_or_employer,
    "employer": _build_job_or_employer,
    "pet-named": _build_pet_named,
    "booked": _build_booked,
    "gone-off": _build_gone_off,
    "person": _build_person,
    "medication-for": _build_medication_for,
    "switched-to": _build_switched_to,
    "come-around": _build_come_around,
    "diet-eat": _build_diet_eat,
    "manage": _build_manage,
    "admitted": _build_admitted,
    "plan-to": _build_plan_to,
    "fired": _build_fired,
    "pet-gone": _build_pet_gone,
    "retired": _build_retired,
    "quit": _build_quit,
    "no-longer": _build_no_longer,
    "marital": _build_marital,
    "pet": _build_pet,
    "family": _build_family,
    "condition": _build_condition,
    "condition-adj": _build_condition,
    "medication": _build_medication,
    "medication-stop": _build_medication,
    "opinion": _build_opinion,
    "plan": _build_plan,
    "plan-progressive": _build_plan,
    "cancel": _build_cancel,
    "event": _build_event,
    "language": _build_language,
    "study": _build_study,
    "hobby": _build_hobby,
    "activity": _build_activity,
    "age": _build_age,
    "identity": _build_identity,
}


def _parse(
    clause: str, previous: Who, carry: ClauseState, correction: bool
) -> tuple[list[Fact], Who]:
    """The facts of one cleaned clause, and whom it was about."""
    replaced = _replacement(clause, correction)
    if replaced is not None:
        return [replaced], previous
    if m := re.match(
        r"^(?:it\s+is\s+|its\s+|it\s+was\s+)?not\s+(?P<old>[\w' -]{2,30})$", clause, re.I
    ):
        carry.replace_old = m.group("old")
        return [], previous
    if carry.replace_old and (
        m := re.match(
            r"^(?:it\s+is|its|it\s+was|but|it\s+is\s+actually)\s+(?P<new>[\w' -]{2,30})$",
            clause,
            re.I,
        )
    ):
        old, carry.replace_old = carry.replace_old, ""
        new = re.sub(r"^(?:an?|the)\s+", "", m.group("new"), flags=re.I)
        return [Fact("", "", "correction", 0.9, 0.8, replace=(old, new))], previous
    whole = _whole_clause(clause, correction, carry)
    if whole is not None:
        return whole, previous
    if (correction or carry.corrected) and (
        m := re.match(
            r"^(?:it\s+is|its)\s+(?:actually\s+|really\s+|only\s+|just\s+)*(?P<v>[\w' ,-]{2,60}?)$",
            clause,
            re.I,
        )
    ):
        carry.new_value = _clean_value(m.group("v"), commas=True)
        return [], previous
    it_is = _IT_IS.match(clause)
    if it_is and carry.negated is not None:
        who = carry.negated[1]
        return _negated_value(it_is, carry), who
    return _parse_said(clause, previous, carry, correction)


def _negated_value(it_is: re.Match[str], carry: ClauseState) -> list[Fact]:
    """The negated fact, with a new value: "it's shellfish" after "I'm not allergic to
    peanuts"."""
    assert carry.negated is not None
    kind, who = carry.negated
    carry.negated = None
    value = _clean_value(it_is.group("v"))
    prefix = {"allergy": "am allergic to ", "home": "live in ", "job": "work as ",
              "employer": "work at ", "diet": "am ", "condition": "have ",
              "condition-adj": "am ", "medication": "take ", "opinion": "like ",
              "marital": "am "}[kind]  # fmt: skip
    value = re.sub(r"^(?:to|in|at|as)\s+", "", value, flags=re.I)
    facts = _english_facts(prefix + value, who, ClauseState(), True)
    return facts


def _parse_said(
    clause: str, previous: Who, carry: ClauseState, correction: bool
) -> tuple[list[Fact], Who]:
    """A clause that is no new value of a negated one: who it is about, and what it says."""
    facts: list[Fact] = []
    who = previous
    call = re.match(
        r"^(?i:(?:you can |please |just |everyone |people |friends |they |my friends )*"
        r"calls? me\s+)" + NAME,
        clause,
    )
    if call and bare_name(call.group("name")):
        facts = [
            Fact(as_sentence(f"The user's name is {call.group('name')}"), "name", "fact", 0.8, 0.9)
        ]
        return facts, SELF
    thing = _MY_THING.match(clause)
    pet = _MY_PET.match(clause)
    subject = _SUBJECT.match(clause)
    if pet and re.match(
        r"^(?:died|passed away|ran away|is gone|was put down)", pet.group("pred") or ""
    ):
        facts = [
            Fact("", "", "fact", 0.8, 0.6, ends=[Ending(group="pet", value=pet.group("name"))])
        ]
    elif pet:
        species, name = pet.group("species").lower(), pet.group("name")
        text = f"The user has a {species} named {name}"
        facts = [Fact(as_sentence(text), f"pet:{value_key(name)}", "fact", 0.8, 0.7)]
    elif (
        thing
        and thing.group("attr").lower().split()[0] not in _relation_words()
        and not re.match(r"^\w+ing\b|.*\bmy\b", thing.group("v"), re.I)
    ):
        facts = _my_thing_facts(thing, correction)
    elif subject:
        facts, who = _subject_facts(subject, clause, carry, correction)
    elif who is not SELF and re.match(r"^(?:she|he|they)\b", clause, re.I):
        rest = re.sub(r"^(?:she|he|they)\s+", "", clause, flags=re.I)
        facts = _english_facts(rest, who, carry, correction)
    else:
        now_a = _NOW_A.match(clause)
        if (
            now_a
            and carry.negated is None
            and re.search(rf"\b(?:{DIETS})\b", now_a.group("v"), re.I)
        ):
            facts = _english_facts("am " + now_a.group("v"), SELF, carry, correction)
    return facts, who


def _my_thing_facts(thing: re.Match[str], correction: bool) -> list[Fact]:
    """ "My sister's name is Ana", "my address is ...": an attribute of the user or of one
    of their people."""
    facts: list[Fact] = []
    rel, attr = thing.group("rel"), thing.group("attr").lower()
    value = _clean_value(
        re.sub(
            r"^(?:actually|really|now|still|officially)\s+",
            "",
            thing.group("v"),
            flags=re.I,
        ),
        commas=True,
    )
    if (value and attr not in ("name",)) or (attr == "name" and value):
        owner = f"The user's {rel.lower()}" if rel else "The user"
        prefix = f"{rel.lower()}|" if rel else ""
        slot = {"name": "name", "job": "job", "home": "home", "address": "home"}.get(attr, attr)
        text = f"{owner}'s {attr} is {value}"
        facts = [
            Fact(
                as_sentence(text),
                f"{prefix}{slot}",
                "relationship" if rel else "fact",
                0.9 if correction else 0.8,
                0.9 if attr == "name" else 0.7,
            )
        ]
    return facts


def _subject_facts(
    subject: re.Match[str], clause: str, carry: ClauseState, correction: bool
) -> tuple[list[Fact], Who]:
    """A clause with its subject ("I ...", "my sister ..."): what it says of them."""
    facts: list[Fact] = []
    if subject.group("rel"):
        rel = subject.group("rel").lower()
        who = Who(f"The user's {rel}", f"{rel}|", plural=rel in PLURAL_RELATIONS)
        relname = subject.group("relname")
        rest = clause[subject.end() :].strip(" ,")
        if relname:
            facts.append(
                Fact(
                    as_sentence(f"The user's {rel}'s name is {relname}"),
                    f"{rel}|name",
                    "relationship",
                    0.8,
                    0.6,
                )
            )
    else:
        who = SELF
        rest = clause[subject.end() :].strip(" ,")
    rest = re.sub(
        r"^(?:also|still|now|just|recently|finally|actually|currently|then|really)\s+",
        "",
        rest,
        flags=re.I,
    )
    rest = re.sub(
        r"^(?:also|still|now|just|recently|finally|actually|currently|then|really)\s+",
        "",
        rest,
        flags=re.I,
    )
    carry.only = bool(re.search(r"\bonly\b", rest, re.I))
    rest = _ADVERBS.sub("", rest)
    facts += _english_facts(rest, who, carry, correction)
    carry.only = False
    return facts, who


def english_clause(
    raw: str, carry: ClauseState, now: datetime, previous: Who
) -> tuple[list[Fact], Who]:
    clause = _LEAD.sub("", raw.strip().rstrip(" .!")).strip()
    correction = bool(_CORRECTION.match(clause))
    clause = _CORRECTION.sub("", clause).strip()
    clause = _LEAD.sub("", clause).strip()
    clause = _FRAME.sub("", clause).strip()
    clause = re.sub(r"\s+(?:to be honest|by the way|as well)$", "", clause, flags=re.I)
    clause = re.sub(
        r"\s*\b(?:after all|at all|for good|completely|entirely)\b", "", clause, flags=re.I
    )
    clause = _FILLER_END.sub("", clause).strip()
    clause = re.sub(r"\s*\([^)]*\)", "", clause)  # (said apart: see facts_of)
    clause = re.sub(r"\s*[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]+\s*", " ", clause).strip()
    clause = re.sub(r"^(?:[^:,]{1,30}):\s+(?=\S)", "", clause)  # "Big life update all at once: ..."
    hedged = bool(_HEDGE.search(clause))
    clause = re.sub(
        r"\b(?:i think|i guess|maybe|perhaps|probably|possibly)\b[\s,]*", "", clause, flags=re.I
    ).strip()
    clause, when = take_time(clause, now)
    clause = re.sub(r"^(?:then|and|but|so|also|actually)\s+", "", clause, flags=re.I).strip()
    clause = re.sub(r"^been\s+", "I have been ", clause, flags=re.I)  # chat drops "I've"
    clause = re.sub(r"\s+([?!.,])", r"\1", clause).rstrip(" .!")
    if correction and not clause:
        carry.corrected = True
    if re.search(r"\bautocorrect|\b(?:misspoke|mistyped|typo)\b", raw, re.I):
        carry.corrected = True
    if (
        not clause
        or (clause.endswith("?") and len(clause.split()) < 4 and not _WHOLE_DIET.match(clause))
        or re.match(r"^(?:can|could|would|will|do|does|did)\s+you\b|^any\s+\w+\??$", clause, re.I)
        or (
            re.match(
                r"^(?:do|does|did|can|could|would|should|what|where|when|who|how|why|is|are)\b",
                clause,
                re.I,
            )
            and "?" in raw
        )
    ):
        return [], previous
    facts, who = _parse(clause, previous, carry, correction)
    if not facts:
        # The subject later in the clause: "so turns out I'm ...", "big update, we moved ..."
        for found in _LATER_SUBJECT.finditer(clause):
            if len(clause[: found.start()].split()) > 8:
                break
            facts, who = _parse(clause[found.start() :], previous, carry, correction)
            if facts:
                break
    if not facts and _ELIDED.match(clause):
        # No subject at all, as chat drops it: "moved to Tucson", "quit teaching".
        facts = _english_facts(_ADVERBS.sub("", clause), previous, carry, correction)
    if correction and not facts:
        carry.corrected = True  # "Sorry, I got that wrong." — the next clause corrects
    for fact in facts:
        if hedged:
            fact.confidence = min(fact.confidence, 0.5)
        apply_time(fact, when, now)
    return facts, who


def _relation_words() -> set[str]:
    return set(RELATIONS.replace("?", "").split("|"))
