"""Atomic facts from a user turn (pure: no Django, no database).

A turn is cut into clauses ("I live in Hangzhou and I work as a pastry chef" is two), each
clause into who it is about (the user, or a person of theirs: "my sister") and what it says
of them. What it says fills one *slot*, a thing that holds one value at a time (home, job,
employer, diet, name, marital status, a favourite) or one value among several (an allergy,
a pet, a plan, a condition, an opinion: the slot then carries the value, "allergy:peanut").
A later fact supersedes only the slot it fills; the rest stay current.

Negations and changes *end* facts: "I'm not allergic to peanuts" ends the peanut allergy,
"I quit nursing" ends the current facts that speak of nursing, "I don't eat meat anymore"
replaces the diet. A correction's new value ("..., it's shellfish") takes the negated
clause's place. Time words ("last week", "next month", "下个月") leave the sentence and become
structured time: when it happened, from when it holds, when a plan lapses.

Statements are clean third-person sentences ("The user lives in Shanghai.", "用户住在上海。").
The rules are general grammar and small closed word classes (relations, pets, diets,
occupations' word endings), not phrases of any particular conversation.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from apps.facts import vocabulary
from apps.facts.doubt import HEALTH_GROUPS, Dispute, asserted_in_doubt, disputes_of

# --- data -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ending:
    """Current facts this statement ends: those of `slot` (exactly), or of the slot `group`,
    or any of the person's facts, each narrowed to those that speak of `value` when given."""

    slot: str = ""
    group: str = ""
    value: str = ""


@dataclass
class Fact:
    statement: str  # "" for a pure negation: it only ends facts
    slot: str
    category: str  # fact | preference | plan | event | correction | relationship | health
    confidence: float = 0.8
    importance: float = 0.6
    ends: list[Ending] = field(default_factory=list)
    occurred_at: datetime | None = None
    valid_from: datetime | None = None
    expires_at: datetime | None = None
    # A correction of a value said before ("it's Joan, not Jon"): the current facts that
    # speak of the old value are ended and said again with the new one.
    replace: tuple[str, str] | None = None
    # Current facts the turn puts in doubt without a new value (`doubt`): sent to review.
    disputes: list[Dispute] = field(default_factory=list)

    @property
    def group(self) -> str:
        return slot_group(self.slot)


def slot_group(slot: str) -> str:
    """The kind of a slot, for endings that name a kind, not a value ("plan:kyoto" -> plan;
    "sister:home" -> sister:home)."""
    person, _, rest = slot.rpartition("|")
    head = rest.split(":", 1)[0]
    return f"{person}|{head}" if person else head


# --- words ----------------------------------------------------------------------------------

_STOP = set(
    [
        "a",
        "an",
        "the",
        "my",
        "our",
        "your",
        "his",
        "her",
        "their",
        "its",
        "to",
        "of",
        "in",
        "at",
        "on",
        "for",
        "with",
        "and",
        "or",
        "as",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "this",
        "that",
        "these",
        "those",
        "some",
        "any",
        "very",
        "really",
        "just",
        "now",
        "also",
        "too",
        "not",
        "no",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "will",
        "would",
        "can",
        "could",
        "from",
        "by",
        "about",
        "into",
    ]
)


def stem(word: str) -> str:
    """A crude stem, enough to see that "nursing", "nurse" and "nurses" are one word."""
    word = word.lower()
    for suffix in ("ing", "ers", "ors", "er", "or", "es", "ed", "s", "e", "y"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def stems(text: str) -> set[str]:
    """Content-word stems of a value; each CJK character counts as a word."""
    words = re.findall(r"[^\W\d_]+|\d+", text.lower())
    found: set[str] = set()
    for word in words:
        if re.match(r"[\u3400-\u9fff]", word):
            found.update(ch for ch in word if ch not in "的了是在我你他她它们和与不再")
        elif word not in _STOP:
            found.add(stem(word))
    return found


def speaks_of(statement: str, value: str) -> bool:
    """Whether a stored statement mentions every content word of `value`."""
    wanted = stems(value)
    return bool(wanted) and wanted <= stems(statement)


def substitute(statement: str, old: str, new: str) -> str:
    """The statement with the value `old` corrected to `new` ("...named Jon." -> "...named
    Joan."): the phrase itself, else the words that share its stems."""
    if re.search(r"[\u3400-\u9fff]", old):
        return statement.replace(old, new)
    new_words, old_words = new.split(), old.split()
    if len(new_words) > len(old_words):  # "it's Priyanka Dasgupta, not Desai"
        spanned = " ".join(new_words[: len(new_words) - len(old_words)] + old_words)
        if re.search(rf"\b{re.escape(spanned)}\b", statement, re.I):
            old = spanned
    literal = re.compile(rf"\b{re.escape(old)}\b", re.I)
    if literal.search(statement):
        return literal.sub(new, statement, count=1)
    wanted = stems(old)
    words = re.split(r"(\W+)", statement)
    done = False
    for index, word in enumerate(words):
        if word and stem(word) in wanted:
            words[index] = "" if done else new
            done = True
    return re.sub(r"\s{2,}", " ", "".join(words)).replace(" .", ".")


def _key(value: str) -> str:
    return " ".join(sorted(stems(value))) or value.strip().lower()


RELATIONS = (
    "wife|husband|partner|spouse|boyfriend|girlfriend|fianc[eé]e?|mother|mom|mum|father|dad"
    "|parents|sister|brother|siblings|son|daughter|kids|children|child|baby|grandmother"
    "|grandma|grandfather|grandpa|grandparents|aunt|uncle|cousin|niece|nephew|friend|best friend"
    "|roommate|flatmate|neighbou?r|boss|manager|colleague|coworker|co-worker|teacher|doctor"
    "|mother-in-law|father-in-law|sister-in-law|brother-in-law|twin"
)
_PLURAL_RELATIONS = {"parents", "siblings", "kids", "children", "grandparents"}
PETS = (
    "dog|dogs|puppy|cat|cats|kitten|parrot|bird|hamster|rabbit|bunny|guinea pig|fish|goldfish"
    "|turtle|tortoise|horse|pony|snake|lizard|gecko|ferret|pig|chicken|chickens|budgie|canary"
    "|cockatiel|gerbil|chinchilla|axolotl|iguana|golden retriever|labrador|poodle|beagle|terrier"
    "|greyhound|retriever|spaniel|collie|husky|corgi|pug|dachshund|shepherd|chihuahua|bulldog"
    "|whippet|lab|mutt|tabby"
)
DIETS = (
    "vegetarian|vegan|pescatarian|pescetarian|flexitarian|carnivore|keto|paleo|halal|kosher"
    "|gluten-free|lactose-free|dairy-free|plant-based|raw vegan"
)
FOOD_GROUPS = (
    "meat|red meat|pork|beef|chicken|fish|seafood|dairy|eggs|gluten|sugar|meat or fish"
    "|animal products|alcohol|lamb"
)
MARITAL = "married|single|divorced|engaged|widowed|separated"
# Heads that are no occupation, even in a job title's place ("I'm a runner").
_FAMILY = (
    "wife|husband|partner|spouse|boyfriend|girlfriend|fiancee?|mother|mom|mum|father|dad|parent"
    "|sister|brother|son|daughter|child|baby|grandmother|grandma|grandfather|grandpa|aunt|uncle"
    "|cousin|niece|nephew|friend|roommate|flatmate|neighbou?r|twin|stepmother|stepfather"
)
_NOT_OCCUPATION = re.compile(
    rf"(?:{_FAMILY}|member|beginner|fan|lover|newcomer|foreigner|winner|loser|owner|user"
    r"|customer|patient|resident|citizen|native|adult|parent|person|introvert|extrovert"
    r"|perfectionist|optimist|pessimist|vegetarian|vegan|pescatarian|smoker|drinker|runner"
    r"|swimmer|reader|gamer|sleeper|eater|early riser|night owl)$",
    re.I,
)
_CONDITION = re.compile(
    r"(?:diabetes|asthma|epilepsy|hypertension|high blood pressure|low blood pressure|migraines?"
    r"|arthritis|eczema|psoriasis|celiac disease|coeliac disease|adhd|autism|depression|anxiety"
    r"|insomnia|cancer|a heart condition|heart disease|anemia|anaemia|gout|lupus|covid|the flu"
    r"|a cold|allergies|hay fever|ibs|gerd|acid reflux|\w+itis|\w+osis|\w+emia|\w+ism"
    r"|\w+ disease|\w+ disorder|\w+ syndrome|\w+ sensitivity|\w+ dysfunction)",
    re.I,
)
_TYPED_CONDITION = rf"(?:type\s+\d\s+|chronic\s+|mild\s+|severe\s+)?{_CONDITION.pattern}"
_DEMONYM = re.compile(
    r"^(?:american|british|english|scottish|welsh|irish|canadian|mexican|brazilian|argentinian"
    r"|chilean|colombian|peruvian|french|german|italian|spanish|portuguese|dutch|belgian|swiss"
    r"|austrian|swedish|norwegian|danish|finnish|polish|czech|russian|ukrainian|greek|turkish"
    r"|egyptian|moroccan|nigerian|kenyan|ethiopian|south african|indian|pakistani|bangladeshi"
    r"|chinese|japanese|korean|vietnamese|thai|filipino|indonesian|malaysian|singaporean"
    r"|australian|new zealander|israeli|iranian|iraqi|saudi|emirati|lebanese|jewish|muslim"
    r"|christian|catholic|buddhist|hindu|atheist|asian|european|african|latino|latina)$",
    re.I,
)
_NOT_NAME = re.compile(
    r"^(?:fine|good|great|ok|okay|here|back|sorry|sure|ready|done|home|tired|busy|happy|sad"
    r"|new|excited|afraid|glad|hungry|sick|well|not|so|very|just|also|still|really|actually"
    r"|going|trying|looking|thinking|learning|working|living|moving|planning|allergic)\b",
    re.I,
)

# --- time words -----------------------------------------------------------------------------

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_WEEKDAYS = {name.lower(): number for number, name in enumerate(calendar.day_name)}
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3, "several": 3,
    "a couple": 2,
}  # fmt: skip
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_ZH_NUMBERS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "几": 3, "半": 0.5}

_EN_TIME = re.compile(
    r"\b(?:(?P<rel>last|next|this|coming)\s+(?P<relunit>week(?:end)?|month|year|summer|winter"
    r"|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|(?P<day>yesterday|today|tonight|tomorrow|the day before yesterday|the day after tomorrow"
    r"|last night|this morning|this evening|this afternoon|the other day|earlier today)"
    r"|(?:on|last|this past)\s+(?P<onday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|(?P<weekend>over the weekend|this past weekend|on the weekend)"
    r"|on\s+the\s+(?P<nth>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)"
    r"|(?P<count>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few"
    r"|several|a couple)\s+(?P<unit>day|week|month|year)s?\s+(?P<dir>ago|from now|later)"
    r"|in\s+(?P<incount>\d+|a|an|one|two|three|four|five|six|a couple of|a few)\s+"
    r"(?P<inunit>day|week|month|year)s?"
    r"|(?:in|since|back in)\s+(?P<year>(?:19|20)\d\d)"
    r"|(?:in|on|this|next|last)?\s*(?P<month>january|february|march|april|may|june|july|august"
    r"|september|october|november|december)(?:\s+(?P<monthday>\d{1,2})(?:st|nd|rd|th)?)?"
    r"(?:,?\s+(?P<monthyear>(?:19|20)\d\d))?"
    r"|(?:at|by)\s+the\s+end\s+of\s+(?P<endof>the\s+month|this\s+month|the\s+week"
    r"|this\s+week|the\s+year|this\s+year|next\s+month)"
    r"|(?P<vague>recently|lately|these days|nowadays|currently|at the moment|right now|rn|now"
    r"|anymore|any more|any longer|soon|just now|earlier this year|earlier today))\b",
    re.I,
)
_ZH_TIME = re.compile(
    r"(?P<zday>大前天|前天|昨天|今天|今晚|明天|后天|大后天)"
    r"|(?P<zrel>上|下|这|本)(?:个)?(?P<zunit>星期|礼拜|周末|周|月)(?:[一二三四五六日天])?"
    r"|(?P<zfew>前几天|这几天|前些天|前阵子|这阵子|那天|当天|上次)"
    r"|(?P<zyear>去年|前年|今年|明年|后年)"
    r"|(?P<zcount>[一两二三四五六几半\d]+)(?:个)?(?P<zcunit>天|星期|周|月|年)(?P<zdir>前|后|以后|之后|以前)"
    r"|(?P<zvague>最近|近来|现在|目前|如今|已经|刚刚|刚才|马上|很快|不久)"
)
_MAY_VERB = re.compile(r"\bmay\s+(?:be|have|not|go|want)\b", re.I)


@dataclass
class When:
    at: datetime | None = None  # the point it names
    end: datetime | None = None  # the end of the period it names (a plan lapses after it)
    future: bool = False
    past: bool = False


def _month_end(day: datetime) -> datetime:
    last = calendar.monthrange(day.year, day.month)[1]
    return day.replace(day=last, hour=23, minute=59, second=59, microsecond=0)


def _add_months(day: datetime, months: int) -> datetime:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(
        year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1])
    )


def _en_when(match: re.Match[str], now: datetime) -> When:
    g = match.groupdict()
    if g.get("endof"):
        period = g["endof"].lower()
        base = _add_months(now, 1) if "next" in period else now
        if "month" in period:
            end = _month_end(base)
        elif "week" in period:
            end = now + timedelta(days=6 - now.weekday())
        else:
            end = now.replace(month=12, day=31)
        return When(end, end + timedelta(days=1), future=True)
    if g["rel"]:
        rel, unit = g["rel"].lower(), g["relunit"].lower()
        sign = -1 if rel == "last" else 1 if rel in ("next", "coming") else 0
        if unit in _WEEKDAYS:
            delta = (_WEEKDAYS[unit] - now.weekday()) % 7 or 7
            at = now + timedelta(days=delta if sign >= 0 else delta - 7)
            return When(at, at.replace(hour=23, minute=59), future=sign > 0, past=sign < 0)
        if unit == "month":
            at = _add_months(now, sign)
            return When(at, _month_end(at), future=sign > 0, past=sign < 0)
        if unit == "year":
            at = now.replace(year=now.year + sign)
            return When(at, at.replace(month=12, day=31, hour=23, minute=59), sign > 0, sign < 0)
        days = {"week": 7, "weekend": 7}.get(unit, 91)
        at = now + timedelta(days=sign * days)
        return When(at, at + timedelta(days=days), future=sign > 0, past=sign < 0)
    if g["day"]:
        offset = {
            "yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1,
            "the day before yesterday": -2, "the day after tomorrow": 2, "last night": -1,
            "this morning": 0, "this evening": 0, "this afternoon": 0, "the other day": -3,
            "earlier today": 0,
        }[g["day"].lower()]  # fmt: skip
        at = now + timedelta(days=offset)
        return When(at, at.replace(hour=23, minute=59), future=offset > 0, past=offset < 0)
    if g.get("onday"):
        back = (now.weekday() - _WEEKDAYS[g["onday"].lower()]) % 7 or 7
        at = now - timedelta(days=back)
        return When(at, at.replace(hour=23, minute=59), past=True)
    if g.get("nth"):
        day = int(g["nth"])
        at = now.replace(day=min(day, calendar.monthrange(now.year, now.month)[1]))
        if at.date() < now.date():
            at = _add_months(at, 1)
        return When(at, at.replace(hour=23, minute=59), future=True)
    if g.get("weekend"):
        at = now - timedelta(days=(now.weekday() - 5) % 7 or 7)
        return When(at, at + timedelta(days=2), past=True)
    if g["count"]:
        count = _NUMBER_WORDS.get(g["count"].lower()) or int(g["count"])
        days = count * _UNIT_DAYS[g["unit"].lower()]
        sign = -1 if g["dir"].lower() == "ago" else 1
        at = now + timedelta(days=sign * days)
        return When(at, at + timedelta(days=1), future=sign > 0, past=sign < 0)
    if g["incount"]:
        count = _NUMBER_WORDS.get(g["incount"].lower()) or int(g["incount"])
        at = now + timedelta(days=count * _UNIT_DAYS[g["inunit"].lower()])
        return When(at, at + timedelta(days=1), future=True)
    if g["year"]:
        year = int(g["year"])
        at = now.replace(year=year, month=1, day=1)
        return When(at, at.replace(month=12, day=31), future=year > now.year, past=year < now.year)
    if g["month"]:
        month = _MONTHS[g["month"].lower()]
        year = int(g["monthyear"]) if g["monthyear"] else now.year
        day = min(int(g["monthday"] or 1), calendar.monthrange(year, month)[1])
        at = now.replace(year=year, month=month, day=day)
        end = at.replace(hour=23, minute=59) if g["monthday"] else _month_end(at)
        return When(at, end, future=at > now, past=end < now)
    return When()


def _zh_when(match: re.Match[str], now: datetime) -> When:
    g = match.groupdict()
    if g["zday"]:
        offset = {"大前天": -3, "前天": -2, "昨天": -1, "今天": 0, "今晚": 0, "明天": 1,
                  "后天": 2, "大后天": 3}[g["zday"]]  # fmt: skip
        at = now + timedelta(days=offset)
        return When(at, at.replace(hour=23, minute=59), future=offset > 0, past=offset < 0)
    if g["zrel"]:
        sign = {"上": -1, "下": 1}.get(g["zrel"], 0)
        if g["zunit"] == "月":
            at = _add_months(now, sign)
            return When(at, _month_end(at), future=sign > 0, past=sign < 0)
        at = now + timedelta(days=7 * sign)
        return When(at, at + timedelta(days=7), future=sign > 0, past=sign < 0)
    if g["zyear"]:
        sign = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}[g["zyear"]]
        at = now.replace(year=now.year + sign)
        return When(at, at.replace(month=12, day=31, hour=23, minute=59), sign > 0, sign < 0)
    if g.get("zfew"):
        at = now - timedelta(days=3)
        return When(at, at + timedelta(days=1), past=True)
    if g["zcount"]:
        raw = g["zcount"]
        count = float(raw) if raw.isdigit() else _ZH_NUMBERS.get(raw[0], 1)
        unit = {"天": 1, "星期": 7, "周": 7, "月": 30, "年": 365}[g["zcunit"]]
        sign = -1 if g["zdir"] in ("前", "以前") else 1
        at = now + timedelta(days=sign * count * unit)
        return When(at, at + timedelta(days=1), future=sign > 0, past=sign < 0)
    return When()


def take_time(text: str, now: datetime) -> tuple[str, When]:
    """The clause without its time words, and the time they named (the first that names
    one)."""
    when = When()

    def english(match: re.Match[str]) -> str:
        nonlocal when
        month = match.group("month")
        if month and month.lower() == "may" and _MAY_VERB.match(text, match.start("month")):
            return match.group(0)  # "I may be", not the month
        found = _en_when(match, now)
        if when.at is None and found.at is not None:
            when = found
        elif found.at is None and match.group("vague") and when.at is None:
            vague = match.group("vague").lower()
            when.past = when.past or vague in ("recently", "lately", "just now")
            when.future = when.future or vague == "soon"
        return " "

    def chinese(match: re.Match[str]) -> str:
        nonlocal when
        found = _zh_when(match, now)
        if when.at is None and found.at is not None:
            when = found
        elif match.group("zvague") in ("马上", "很快", "不久"):
            when.future = True
        return ""

    text = _EN_TIME.sub(english, text)
    text = _ZH_TIME.sub(chinese, text)
    return re.sub(r"\s{2,}", " ", text).strip(" ,"), when


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
    "|named|called|taking"
)
_CLAUSES = re.compile(
    r"(?<=[.!?])\s+|\n+|;\s*|:\s+(?=i\b)"
    r"|,?\s+(?:and|but|so|because|since|while|though|although|whereas|plus)\s+"
    r"(?=(?:now\s+|also\s+|then\s+|actually\s+|currently\s+|recently\s+|just\s+)?"
    r"(?:i|my|it|she|he|they|we)\b)"
    r"|,\s*(?=(?:and\s+|but\s+|now\s+|actually\s+|also\s+|instead\s+)*"
    r"(?:i|my|it is|its|it was|she|he|they|we|can you|could you|would you|do you|any)\b)"
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
_NAME = r"(?P<name>(?-i:[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2}))"
_NAMES = r"(?-i:[A-Z][\w'-]+)(?:\s*(?:,|\band\b|&)\s*(?-i:[A-Z][\w'-]+))*"


_VALUE_END_KEEP_COMMAS = re.compile(
    r"\s*(?:,\s*(?:but|and|because|which|so)\b|\bbecause\b|\bwhich\b|\bbut\b|\bso\b|!|\?|$)",
    re.I,
)


_FILLER_END = re.compile(
    r"(?:[\s,]+(?:btw|by the way|haha+|hah|lol|lmao|tbh|fyi|so yeah|yay|omg|ugh|rn"
    r"|at all|for good|for real|you know)|[\s,]*(?::\)|:\(|:D|[\U0001F300-\U0001FAFF"
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


def _expand(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    for pattern, replacement in _CONTRACTIONS_RE:
        text = pattern.sub(replacement, text)
    return text


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sentence(text: str) -> str:
    text = re.sub(r"\s{2,}", " ", text).strip()
    return _cap(text if text.endswith((".", "!", "。")) else text + ".")


@dataclass
class _Who:
    """Whom a clause is about: the user, or one of their people."""

    name: str  # "The user", "The user's sister"
    prefix: str  # "" for the user, "sister|" for their sister: slots per person
    plural: bool = False

    def verb(self, singular: str, plural: str) -> str:
        return plural if self.plural else singular


_SELF = _Who("The user", "")


def _self_or_them(who: _Who, fact: str) -> str:
    return f"{who.name} {fact}"


@dataclass
class _Rule:
    pattern: re.Pattern[str]
    build: object  # (match, who, negated) -> list[Fact]


def _p(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.I)


def _english_rules() -> list[tuple[re.Pattern[str], str]]:
    """(pattern over the predicate, the kind of fact); the first match wins."""
    neg = r"(?P<neg>not\s+|no\s+longer\s+|never\s+)?"
    be = r"(?:am|is|are|have been|has been)\s+"
    drug = (
        r"[\w-]+(?:pril|sartan|olol|statin|pine|formin|azole|cillin|mycin|oxetine|aline|pam"
        r"|lam|zide|prazole|tidine|profen|amine|ine|ide|one|mab|nib|xaban|gliptin|lukast)"
    )
    return [
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
                r"(?P<v>(?-i:[A-Z][a-z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]+)*)"
            ),
            "home",
        ),
        # "left Spotify, I'm at Shopify now": being at a place says where one works only
        # right after leaving an employer (`_Clause.left_employer`); alone ("I'm at Home
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
        (_p(rf"^(?:am|is)\s+(?:now\s+)?on\s+(?P<v>{drug})\b"), "medication"),
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
        (_p(r"^(?:named|called)\s+(?:him|her|it|them)\s+" + _NAME), "pet-named"),
        (
            _p(
                r"^(?:just\s+|finally\s+|officially\s+|recently\s+)?(?:got\s+)?"
                rf"(?P<v>married|engaged|divorced)\b(?:\s+to\s+{_NAME})?"
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
                rf"^(?:{be})?{neg}(?:severely\s+|very\s+|mildly\s+)?(?:allergic"
                r"|intolerant)\s+to\s+(?P<v>.+)"
            ),
            "allergy",
        ),
        (
            _p(
                rf"^(?:do\s+|does\s+)?{neg}(?:have|has)\s+(?:an?\s+)?(?P<v>[\w-]+(?:\s+[\w-]+)?)\s+(?:allergy"
                r"|intolerance)"
            ),
            "allergy",
        ),
        (_p(r"^(?:am|is|was)\s+called\s+" + _NAME), "name"),
        (_p(r"^(?:go|goes)\s+by\s+" + _NAME), "name"),
        (
            _p(
                r"^(?:got|was|were|have been|has been)\s+(?:fired|laid off|let go|made redundant)\b"
            ),
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
        (_p(rf"^{be}{neg}(?:an?\s+|strictly\s+|fully\s+|now\s+)*(?P<v>{DIETS})\b"), "diet"),
        (_p(rf"^{be}(?:on|following)\s+an?\s+(?P<v>[\w-]+)\s+diet"), "diet"),
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
            _p(
                r"^(?:have|has)\s+(?:just\s+)?(?:moved|relocated)\s+(?:back\s+)?(?:in)?to\s+(?P<v>.+)"
            ),
            "home",
        ),
        (
            _p(
                rf"^(?:do\s+|does\s+)?{neg}(?:live|lives|am living|is living"
                r"|are living|reside|resides|am based|is based|am staying"
                r"|is staying|just moved|moved|relocated|moved back)\s+(?:back\s+|put\s+)?(?:in"
                r"|to|at)\s+(?P<v>.+)"
            ),
            "home",
        ),
        (_p(r"^(?:am|is|are)\s+(?:originally\s+)?from\s+(?P<v>.+)"), "origin"),
        (
            _p(
                rf"^(?:do\s+|does\s+)?{neg}(?:work|works|am working"
                r"|is working|started working|started a new job|got a (?:new\s+)?job"
                r"|have been working|has been working)\s+(?:\w+ly\s+"
                r"|full[- ]time\s+|part[- ]time\s+|now\s+)?as\s+(?:an?\s+)?(?P<v>.+)"
            ),
            "job",
        ),
        (
            _p(
                rf"^(?:do\s+|does\s+)?{neg}(?:work|works|am working"
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
        (_p(r"^(?:quit|resigned|handed in my notice|gave notice)\s*$"), "fired"),
        (
            _p(
                r"^(?:got|was|been)\s+(?:poached|hired|headhunted|recruited|snapped up)"
                r"\s+by\s+(?P<v>.+)"
            ),
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
            _p(
                r"^(?:flying|heading|going|travell?ing|driving|moving)\s+(?:back\s+)?to\s+(?P<v>.+)"
            ),
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
        (_p(rf"^{be}(?P<neg>not\s+)?(?P<v>{MARITAL})\b(?:\s+to\s+{_NAME})?"), "marital"),
        (
            _p(
                r"^(?:got|just got|recently got)\s+(?P<v>married|engaged"
                rf"|divorced|separated)\b(?:\s+to\s+{_NAME})?"
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
                rf"|grandchildren)\b(?:\s*,?\s*(?:named|called)\s+{_NAME})?"
            ),
            "family",
        ),
        (
            _p(
                r"^(?:do\s+|does\s+)?(?P<neg>not\s+|no\s+longer\s+)(?:have"
                rf"|has|suffer from|suffers from)\s+(?P<v>{_TYPED_CONDITION})"
            ),
            "condition",
        ),
        (
            _p(
                r"^(?:(?:have|has|suffer from|suffers from)\s+(?P<v>" + _TYPED_CONDITION + r")"
                r"|(?:was|were|got|have been|has been|just got|just been)\s+diagnosed\s+with\s+"
                r"(?P<v2>[\w' -]{3,40}))"
            ),
            "condition",
        ),
        (
            _p(
                rf"^{be}{neg}(?P<v>diabetic|asthmatic|epileptic|pregnant"
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
                rf"(?P<cond>{_TYPED_CONDITION})"
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
        (_p(r"^(?:am|is|are)\s+(?P<v>(?!going\b)[a-z]+ing\b.+)"), "activity"),
        (_p(r"^(?:just\s+)?turned\s+(?P<v>\d{1,3})\b"), "age"),
        (
            _p(
                r"^(?:am|is)\s+(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+){0,2})"
                r"\s*(?:$|,|!|\.|\s+(?:and|btw|here|by the way|nice|from|if)\b)"
            ),
            "name-bare",
        ),
        (
            _p(r"^(?:am|is|are)\s+(?:now\s+)?(?P<neg>not\s+)?(?:an?\s+)(?P<v>[\w &'-]{2,60})"),
            "identity",
        ),
    ]


_RULES = _english_rules()
_MY_THING = re.compile(
    rf"^my\s+(?:(?P<rel>{RELATIONS})'s\s+)?(?P<attr>(?:favou?rite\s+)?[a-z]+(?:\s+[a-z]+)?)\s+"
    r"(?:is|are|was)\s+(?P<v>.+)",
    re.I,
)
_MY_PET = re.compile(
    rf"^my\s+(?:new\s+|little\s+)?(?P<species>{PETS})(?:'s name is"
    rf"|\s+is\s+(?:named|called)|,)?\s+{_NAME}"
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
    r"|loves|hates|tapered|tapering|cut out|no more|took up|named|called)\b",
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


def _whole_clause(clause: str, correction: bool, carry: _Clause) -> list[Fact] | None:
    """Clauses whose subject is the thing itself: "it's almonds I react to", "walnuts are
    fine", "Pickle passed away", "swimming is my thing now"."""
    conf = 0.9 if correction else 0.8
    if m := re.match(
        r"^it\s+is\s+(?:actually\s+|really\s+|only\s+)?(?P<v>[\w -]{2,40}?)\s+(?:that\s+)?i\s+"
        r"(?:am\s+)?"
        r"(?:allergic\s+to|react\s+to"
        r"|cannot\s+eat|can not\s+eat)$",
        clause,
        re.I,
    ):
        value = m.group("v")
        slot = f"allergy:{_key(value)}"
        return [Fact(_sentence(f"The user is allergic to {value}"), slot, "health", conf, 0.95)]
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
        m := re.match(r"^(?:now\s+)?(?:he|she|it)\s+is\s+(?:called\s+)?" + _NAME, clause, re.I)
    ):
        name, species = m.group("name"), carry.species or "pet"
        text = f"The user has a {species} named {name}"
        return [Fact(_sentence(text), f"pet:{_key(name)}", "fact", conf, 0.7)]
    if m := re.match(
        rf"^my\s+(?:current|new|present)\s+(?P<species>{PETS})\s+is\s+(?:called\s+|named\s+)?"
        + _NAME,
        clause,
        re.I,
    ):
        species, name = m.group("species").lower(), m.group("name")
        ends = [Ending(group="pet", value=species)]
        text = f"The user has a {species} named {name}"
        return [Fact(_sentence(text), f"pet:{_key(name)}", "fact", conf, 0.7, ends=ends)]
    if m := re.match(
        r"^my\s+(?:only\s+|real\s+|actual\s+)?allerg(?:y|ies)\s+(?:is|are)\s+(?:to\s+)?"
        r"(?P<v>[\w -]+?)(?:,?\s+not\s+(?:to\s+)?(?P<old>[\w -]+))?$",
        clause,
        re.I,
    ):
        value = m.group("v")
        slot = f"allergy:{_key(value)}"
        ends = [Ending(slot=f"allergy:{_key(m.group('old'))}")] if m.group("old") else []
        text = f"The user is allergic to {value}"
        return [Fact(_sentence(text), slot, "health", conf, 0.95, ends=ends)]
    if m := re.match(
        rf"^(?:so\s+)?(?:i\s+am\s+|now\s+)?(?:an?\s+)?(?P<v>{DIETS})(?:\s+now)?(?:\s+i\s+guess)?\??$",
        clause,
        re.I,
    ):
        return [Fact(_sentence(f"The user is {m.group('v').lower()}"), "diet", "fact", conf, 0.8)]
    if m := re.match(r"^(?:his|her|its)\s+name\s+is\s+" + _NAME, clause, re.I):
        species = carry.species or "pet"
        name = m.group("name")
        return [
            Fact(
                _sentence(f"The user has a {species} named {name}"),
                f"pet:{_key(name)}",
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
            Fact(_sentence(f"The user works at {m.group('v')}"), "employer", "fact", conf, 0.75)
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
        slot = f"condition:{_key(value)}"
        return [Fact(_sentence(f"The user is {value}"), slot, "health", conf, 0.9)]
    if m := re.match(
        r"^(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)*)\s+is\s+(?:just\s+|only\s+)?where\s+"
        r"(?:i|we)\s+(?P<verb>work|study)",
        clause,
        re.I,
    ):
        verb = "works" if m.group("verb").lower() == "work" else "studies"
        text = f"The user {verb} in {m.group('v')}"
        return [Fact(_sentence(text), f"{m.group('verb').lower()}place", "fact", conf, 0.7)]
    if m := re.search(
        r"\boutgrown\s+(?:the\s+|my\s+|an?\s+)?(?P<v>[\w -]{2,30}?)\s+(?:allergy|intolerance)",
        clause,
        re.I,
    ):
        slot = f"allergy:{_key(m.group('v'))}"
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
        job = _build_job(_SELF, m.group("job"), conf)
        org = _clean_value(m.group("org"))
        text = f"The user works at {org}"
        return [job, Fact(_sentence(text), "employer", "fact", conf, 0.75)]
    if m := re.match(
        r"^(?:the\s+|my\s+|our\s+)?(?P<v>[\w' -]{2,40}?)\s+(?:got|was|has been|is|have been)"
        r"\s+(?:cancell?ed|called off|postponed|scrapped)\b",
        clause,
        re.I,
    ):
        return [Fact("", "", "plan", conf, 0.6, ends=[Ending(group="plan", value=m.group("v"))])]
    if m := re.search(
        r"\b(?:put|started|switched|moved|changed)\s+me\s+(?P<how>on(?:to)?|to|over to)\s+"
        r"(?P<v>(?!an?\b|the\b)[\w-]+)(?:\s+for\s+(?P<cond>[\w ]{3,40}))?",
        clause,
        re.I,
    ):
        value = m.group("v")
        slot = f"medication:{_key(value)}"
        ends = [Ending(group="medication")] if m.group(0).lower().startswith("switched") else []
        facts = [Fact(_sentence(f"The user takes {value}"), slot, "health", conf, 0.9, ends=ends)]
        cond = (m.group("cond") or "").strip()
        if cond and _CONDITION.fullmatch(cond):
            text = f"The user has {cond}"
            facts.append(Fact(_sentence(text), f"condition:{_key(cond)}", "health", conf, 0.9))
        return facts
    if m := re.match(
        r"^(?:the\s+)?(?P<v>[\w -]{2,30}?)\s+(?:allergy|intolerance)\s+is\s+(?:my|his|her|their)\s+"
        r"\w+'s,?\s+not\s+mine",
        clause,
        re.I,
    ):
        slot = f"allergy:{_key(m.group('v'))}"
        return [Fact("", slot, "health", 0.9, 0.9, ends=[Ending(slot=slot)])]
    if m := re.search(
        r"\b(?:officially|just turned|turned|turning|am now|i am)\s+(?P<v>[1-9]\d)\b"
        r"(?!\s*(?:minutes|hours|days|weeks|months|%|am|pm|times|of|people|years? ago))",
        clause,
        re.I,
    ):
        text = f"The user is {m.group('v')} years old"
        return [Fact(_sentence(text), "age", "fact", conf, 0.6)]
    if m := re.search(
        r"\b(?:an?|the)\s+(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)\s+(?:resident|local)\b",
        clause,
        re.I,
    ):
        value = m.group("v")
        ends = [Ending(group="plan", value=value)]
        return [Fact(_sentence(f"The user lives in {value}"), "home", "fact", conf, 0.8, ends=ends)]
    if m := re.match(
        r"^(?P<v>[\w -]{2,40}?)\s+is\s+(?:totally\s+)?my\s+(?:new\s+)?(?:thing|jam|passion"
        r"|favou?rite thing|obsession)\b",
        clause,
        re.I,
    ):
        value = m.group("v")
        if value.lower() not in _NOT_A_THING:
            text = f"The user likes {value}"
            return [Fact(_sentence(text), f"opinion:{_key(value)}", "preference", conf, 0.6)]
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
    return vocabulary.names_an_occupation(value) and not _NOT_OCCUPATION.search(value.lower())


def _bare_name(value: str) -> bool:
    words = value.split()
    return (
        0 < len(words) <= 3
        and all(w[0].isupper() for w in words)
        and not _DEMONYM.match(value)
        and not _NOT_NAME.match(value)
    )


_ADVERBS = re.compile(
    r"\b(?:actually|honestly|definitely|officially|even|still|currently|also|just|really|finally"
    r"|fully|completely|obviously|basically|apparently"
    r"|recently|already|both|strictly|only|totally|absolutely|literally|basically|seriously"
    r"|truly|now)\s+",
    re.I,
)


class _Clause:
    """State carried between the clauses of one turn (a correction's new value)."""

    def __init__(self) -> None:
        self.negated: tuple[str, _Who] | None = None  # the rule kind of the last negation
        self.replace_old = ""  # "不是X" / "停了X": the value the next clause replaces
        self.replace_kind = ""  # "medication" after "停了X": "换成Y" is a new medication
        self.species = ""  # the last pet named without its name yet
        self.corrected = False  # a clause that only said "I got it wrong" ("打错了")
        self.last_group = ""  # the slot kind just stated ("过敏的是X"): "不是Y" negates its Y
        self.only = False  # "I'm only allergic to X": the other allergies end
        self.renaming = False  # "we renamed the parrot ... he's Captain now"
        self.new_value = ""  # "Correction: it's actually cashews": a value whose slot comes later
        self.left_employer = False  # a clause ended an employer ("I left Spotify")


def _english_facts(clause: str, who: _Who, carry: _Clause, correction: bool) -> list[Fact]:
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
_PLACE_NAME = re.compile(r"(?-i:\b[A-Z][\w'.-]+)")
_PASSING_STAY = re.compile(
    r"\b(?:hotel|hostel|airbnb|tonight|this week(?:end)?|for the (?:night|week(?:end)?|holidays?)"
    r"|for (?:a|two|three|a few) (?:days|nights|weeks)|on (?:holiday|vacation|a trip))\b",
    re.I,
)


def _value(match: re.Match[str], group: str = "v") -> str:
    return _clean_value(match.group(group) or "")


def _build_job(who: _Who, value: str, conf: float) -> Fact:
    article = "an" if value[:1].lower() in "aeiou" else "a"
    text = f"{who.name} {who.verb('works', 'work')} as {article} {value}"
    return Fact(_sentence(text), f"{who.prefix}job", "fact", conf, 0.75)


_WHOLE_DIET = re.compile(rf"^(?:so\s+)?(?:an?\s+)?(?:{DIETS})\b", re.I)


def _build(
    kind: str, m: re.Match[str], who: _Who, correction: bool, carry: _Clause
) -> list[Fact] | None:
    g = m.groupdict()
    negated = bool((g.get("neg") or "").strip())
    p = who.prefix
    conf = 0.9 if correction else 0.8
    if kind == "allergy":
        value = _value(m)
        if not value:
            return None
        values = [v for v in re.split(r"\s*(?:,|\band\b|&|\bor\b)\s*", value) if v.strip()]
        facts = []
        for one in values:
            slot = f"{p}allergy:{_key(one)}"
            if negated:
                facts.append(Fact("", slot, "health", conf, 0.9, ends=[Ending(slot=slot)]))
                continue
            text = f"{who.name} {who.verb('is', 'are')} allergic to {one}"
            facts.append(Fact(_sentence(text), slot, "health", conf, 0.95))
        if facts and not negated and carry.only:
            facts[0].ends.append(Ending(group=f"{p}allergy"))
        return facts
    if kind in ("name", "name-bare"):
        name = (g.get("name") or g.get("v") or "").strip()
        if kind == "name-bare" and not _bare_name(name):
            return None
        name = _clean_value(name)
        if not name:
            return None
        text = f"{who.name}'s name is {name}" if who.prefix else f"The user's name is {name}"
        return [Fact(_sentence(text), f"{p}name", "fact", conf, 0.9)]
    if kind == "diet":
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
        return [Fact(_sentence(text), f"{p}diet", "fact", conf, 0.8)]
    if kind in ("diet-not", "diet-stop"):
        value = _value(m)
        value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
        verb = "drink" if "alcohol" in value else "eat"
        text = f"{who.name} {who.verb('does', 'do')} not {verb} {value}"
        return [Fact(_sentence(text), f"{p}diet", "fact", conf, 0.8)]
    if kind == "home":
        value = _value(m)
        if not value or value.lower() in ("here", "there", "it", "this", "that"):
            return None
        # "Live in" takes a named place ("Leeds", "a small town near Leeds"): "live in the
        # past", "live in this hoodie" name none. A night's stay is not a home.
        weak = _LIVING.match(m.group(0))
        if (weak and not _PLACE_NAME.search(value)) or _PASSING_STAY.search(m.string):
            return None
        if negated:
            return [
                Fact("", f"{p}home", "fact", conf, 0.8, ends=[Ending(slot=f"{p}home", value=value)])
            ]
        text = f"{who.name} {who.verb('lives', 'live')} in {value}"
        # A planned move that happened is no longer a plan.
        ends = [Ending(group=f"{p}plan", value=value)]
        return [Fact(_sentence(text), f"{p}home", "fact", conf, 0.8, ends=ends)]
    if kind == "origin":
        value = _value(m)
        return (
            [
                Fact(
                    _sentence(f"{who.name} {who.verb('is', 'are')} from {value}"),
                    f"{p}origin",
                    "fact",
                    conf,
                    0.7,
                )
            ]
            if value
            else None
        )
    if kind in ("job", "employer"):
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
                Fact(_sentence(org), f"{p}employer", "fact", conf, 0.75),
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
            extra.append(Fact(_sentence(text), f"{p}home", "fact", conf, 0.75))
        if kind == "job":
            split = re.match(r"^(?P<job>.+?)\s+(?:at|for|with)\s+(?P<org>.*(?-i:[A-Z]).*)$", value)
            if split:
                job = _build_job(who, split.group("job"), conf)
                org = f"{who.name} {who.verb('works', 'work')} at {split.group('org')}"
                return [job, Fact(_sentence(org), f"{p}employer", "fact", conf, 0.75), *extra]
            article = "an" if value[:1].lower() in "aeiou" else "a"
            text = f"{who.name} {who.verb('works', 'work')} as {article} {value}"
        else:
            text = f"{who.name} {who.verb('works', 'work')} at {value}"
        return [Fact(_sentence(text), f"{p}{kind}", "fact", conf, 0.75), *extra]
    if kind == "pet-named":
        name = g["name"]
        text = f"{who.name} {who.verb('has', 'have')} a {carry.species or 'pet'} named {name}"
        return [Fact(_sentence(text), f"{p}pet:{_key(name)}", "fact", conf, 0.7)]
    if kind == "booked":
        value = _value(m)
        if len(value.split()) < 2:
            return None
        text = f"{who.name} booked {value}"
        return [Fact(_sentence(text), f"{p}plan:{_key(value)}", "plan", 0.75, 0.6)]
    if kind == "gone-off":
        value = _clean_value(g.get("v") or g.get("v2") or "")
        if not value:
            return None
        return [
            Fact("", "", "preference", conf, 0.6, ends=[Ending(group=f"{p}opinion", value=value)])
        ]
    if kind == "person":
        value = g["v"]
        if value.lower() in ("people", "morning", "night", "cat", "dog") or _DEMONYM.match(value):
            if value.lower() in ("cat", "dog"):
                text = f"{who.name} {who.verb('is', 'are')} a {value.lower()} person"
                return [Fact(_sentence(text), f"{p}opinion:{_key(value)}", "preference", conf, 0.5)]
            return None
        text = f"{who.name} {who.verb('likes', 'like')} {value}"
        return [Fact(_sentence(text), f"{p}opinion:{_key(value)}", "preference", conf, 0.6)]
    if kind == "medication-for":
        value, cond = _value(m), g["cond"]
        return [
            Fact(
                _sentence(f"{who.name} {who.verb('takes', 'take')} {value}"),
                f"{p}medication:{_key(value)}",
                "health",
                conf,
                0.9,
            ),
            Fact(
                _sentence(f"{who.name} {who.verb('has', 'have')} {cond}"),
                f"{p}condition:{_key(cond)}",
                "health",
                conf,
                0.9,
            ),
        ]
    if kind == "switched-to":
        value = _value(m)
        text = f"{who.name} switched to {value}"
        return [Fact(_sentence(text), f"{p}habit:{_key(value)}", "preference", conf, 0.5)]
    if kind == "come-around":
        value = _value(m)
        text = f"{who.name} {who.verb('likes', 'like')} {value}"
        return [Fact(_sentence(text), f"{p}opinion:{_key(value)}", "preference", conf, 0.6)]
    if kind == "diet-eat":
        value = _value(m)
        text = f"{who.name} {who.verb('eats', 'eat')} {value}"
        return [Fact(_sentence(text), f"{p}diet", "fact", conf, 0.7)]
    if kind == "manage":
        verb = m.group(0).split()[0].lower()
        verb = {"manage": "manages", "run": "runs", "own": "owns", "opened": "opened"}.get(
            verb, verb
        )
        text = f"{who.name} {verb} {_value(m)}"
        return [Fact(_sentence(text), f"{p}job", "fact", conf, 0.7)]
    if kind == "admitted":
        value = _value(m)
        text = f"{who.name} got into {value}"
        return [Fact(_sentence(text), f"{p}event:{_key(value)}", "event", conf, 0.7)]
    if kind == "plan-to":
        value = _value(m)
        verb = m.group(0).split()[0].lower()
        text = f"{who.name} {who.verb('is', 'are')} {verb} to {value}"
        return [Fact(_sentence(text), f"{p}plan:{_key(value)}", "plan", 0.75, 0.6)]
    if kind == "fired":
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
    if kind == "pet-gone":
        species = re.sub(r"s$", "", g["species"].lower())
        return [Fact("", "", "fact", conf, 0.6, ends=[Ending(group=f"{p}pet", value=species)])]
    if kind == "retired":
        text = f"{who.name} {who.verb('is', 'are')} retired"
        return [
            Fact(_sentence(text), f"{p}job", "fact", conf, 0.7, ends=[Ending(slot=f"{p}employer")])
        ]
    if kind == "quit":
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
    if kind == "no-longer":
        value = _value(m)
        if not value:
            return None
        return [Fact("", "", "fact", conf, 0.7, ends=[Ending(value=value)])]
    if kind == "marital":
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
        return [Fact(_sentence(text), f"{p}marital", "relationship", conf, 0.75, ends=ends)]
    if kind == "pet":
        species = g["species"].lower()
        carry.species = re.sub(r"(?<!s)s$", "", species)
        names = re.split(r"\s*(?:,|\band\b|&)\s*", g.get("names") or "")
        names = [n for n in names if n and not _NOT_NAME.match(n)]
        if len(names) > 1 or (names and species.endswith("s") and species != "fish"):
            species = re.sub(r"(?<!s)s$", "", species)
        if not names:
            text = f"{who.name} {who.verb('has', 'have')} a {species}"
            return [Fact(_sentence(text), f"{p}pet:{_key(species)}", "fact", conf, 0.7)]
        return [
            Fact(
                _sentence(f"{who.name} {who.verb('has', 'have')} a {species} named {name}"),
                f"{p}pet:{_key(name)}",
                "fact",
                conf,
                0.7,
            )
            for name in names
        ]
    if kind == "family":
        rel = g["rel"].lower()
        name = g.get("name")
        count = m.group(0).split()[1].lower()
        text = f"{who.name} {who.verb('has', 'have')} {count} {rel}" + (
            f" named {name}" if name else ""
        )
        return [
            Fact(
                _sentence(text),
                f"{p}family:{_key(rel)}:{_key(name or '')}",
                "relationship",
                conf,
                0.7,
            )
        ]
    if kind in ("condition", "condition-adj"):
        value = _value(m) or _clean_value(g.get("v2") or "")
        key = _key(value)
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
        verb = who.verb("is", "are") if kind == "condition-adj" else who.verb("has", "have")
        return [Fact(_sentence(f"{who.name} {verb} {value}"), slot, "health", conf, 0.9)]
    if kind in ("medication", "medication-stop"):
        value = _value(m)
        slot = f"{p}medication:{_key(value)}"
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
                _sentence(f"{who.name} {who.verb('takes', 'take')} {value}"),
                slot,
                "health",
                conf,
                0.9,
            )
        ]
    if kind == "opinion":
        value = _value(m)
        value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
        if not value or value.lower() in ("it", "that", "this", "them", "you", "to"):
            return None
        verb = g["verb"].lower()
        dislike = verb.startswith(("hate", "dislike", "cannot", "can not"))
        if negated:
            dislike = not dislike
        slot = f"{p}opinion:{_key(value)}"
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
        return [Fact(_sentence(text), slot, "preference", conf, 0.6)]
    if kind in ("plan", "plan-progressive"):
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
        return [Fact(_sentence(text), f"{p}plan:{_key(value)}", "plan", 0.75, 0.6)]
    if kind == "cancel":
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
    if kind == "event":
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
                _sentence(text), f"{p}event:{_key(verb + ' ' + rest)}", "event", 0.8, 0.6, ends=ends
            )
        ]
    if kind == "language":
        value = _value(m)
        return (
            [
                Fact(
                    _sentence(f"{who.name} {who.verb('speaks', 'speak')} {value}"),
                    f"{p}language:{_key(value)}",
                    "fact",
                    conf,
                    0.5,
                )
            ]
            if value
            else None
        )
    if kind == "study":
        value = _value(m)
        return (
            [
                Fact(
                    _sentence(f"{who.name} {who.verb('studies', 'study')} {value}"),
                    f"{p}study",
                    "fact",
                    conf,
                    0.6,
                )
            ]
            if value
            else None
        )
    if kind == "hobby":
        value = _value(m)
        return (
            [
                Fact(
                    _sentence(f"{who.name} {who.verb('plays', 'play')} {value}"),
                    f"{p}hobby:{_key(value)}",
                    "preference",
                    conf,
                    0.5,
                )
            ]
            if value
            else None
        )
    if kind == "activity":
        value = _value(m)
        if len(value.split()) < 2:
            return None
        text = f"{who.name} {who.verb('is', 'are')} {value}"
        return [Fact(_sentence(text), f"{p}activity:{_key(value)}", "fact", 0.75, 0.5)]
    if kind == "age":
        value = g["v"]
        return [
            Fact(
                _sentence(f"{who.name} {who.verb('is', 'are')} {value} years old"),
                f"{p}age",
                "fact",
                conf,
                0.6,
            )
        ]
    if kind == "identity":
        value = _value(m)
        if not value or re.search(r"\b(?:kind|type|sort) of\b", value, re.I):
            return None
        value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
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
                return [job, Fact(_sentence(text), f"{p}home", "fact", conf, 0.75)]
            text = f"{who.name} {who.verb('works', 'work')} at {where}"
            return [job, Fact(_sentence(text), f"{p}employer", "fact", conf, 0.75)]
        if _is_occupation(value):
            text = f"{who.name} {who.verb('works', 'work')} as {article} {value}"
            return [Fact(_sentence(text), f"{p}job", "fact", conf, 0.7)]
        text = f"{who.name} {who.verb('is', 'are')} {article} {value}"
        return [Fact(_sentence(text), "", "fact", 0.7, 0.5)]
    return None


def _parse(
    clause: str, previous: _Who, carry: _Clause, correction: bool
) -> tuple[list[Fact], _Who]:
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
    facts: list[Fact] = []
    who = previous
    # "it's shellfish" after "I'm not allergic to peanuts": the negated fact, a new value.
    it_is = _IT_IS.match(clause)
    if it_is and carry.negated is not None:
        kind, who = carry.negated
        carry.negated = None
        value = _clean_value(it_is.group("v"))
        prefix = {"allergy": "am allergic to ", "home": "live in ", "job": "work as ",
                  "employer": "work at ", "diet": "am ", "condition": "have ",
                  "condition-adj": "am ", "medication": "take ", "opinion": "like ",
                  "marital": "am "}[kind]  # fmt: skip
        value = re.sub(r"^(?:to|in|at|as)\s+", "", value, flags=re.I)
        facts = _english_facts(prefix + value, who, _Clause(), True)
    else:
        call = re.match(
            r"^(?i:(?:you can |please |just |everyone |people |friends |they |my friends )*"
            r"calls? me\s+)" + _NAME,
            clause,
        )
        if call and _bare_name(call.group("name")):
            facts = [
                Fact(
                    _sentence(f"The user's name is {call.group('name')}"), "name", "fact", 0.8, 0.9
                )
            ]
            return facts, _SELF
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
            facts = [Fact(_sentence(text), f"pet:{_key(name)}", "fact", 0.8, 0.7)]
        elif (
            thing
            and thing.group("attr").lower().split()[0] not in _relation_words()
            and not re.match(r"^\w+ing\b|.*\bmy\b", thing.group("v"), re.I)
        ):
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
                slot = {"name": "name", "job": "job", "home": "home", "address": "home"}.get(
                    attr, attr
                )
                text = f"{owner}'s {attr} is {value}"
                facts = [
                    Fact(
                        _sentence(text),
                        f"{prefix}{slot}",
                        "relationship" if rel else "fact",
                        0.9 if correction else 0.8,
                        0.9 if attr == "name" else 0.7,
                    )
                ]
        elif subject:
            if subject.group("rel"):
                rel = subject.group("rel").lower()
                who = _Who(f"The user's {rel}", f"{rel}|", plural=rel in _PLURAL_RELATIONS)
                relname = subject.group("relname")
                rest = clause[subject.end() :].strip(" ,")
                if relname:
                    facts.append(
                        Fact(
                            _sentence(f"The user's {rel}'s name is {relname}"),
                            f"{rel}|name",
                            "relationship",
                            0.8,
                            0.6,
                        )
                    )
            else:
                who = _SELF
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
        elif who is not _SELF and re.match(r"^(?:she|he|they)\b", clause, re.I):
            rest = re.sub(r"^(?:she|he|they)\s+", "", clause, flags=re.I)
            facts = _english_facts(rest, who, carry, correction)
        else:
            now_a = _NOW_A.match(clause)
            if (
                now_a
                and carry.negated is None
                and re.search(rf"\b(?:{DIETS})\b", now_a.group("v"), re.I)
            ):
                facts = _english_facts("am " + now_a.group("v"), _SELF, carry, correction)
    return facts, who


def _english_clause(
    raw: str, carry: _Clause, now: datetime, previous: _Who
) -> tuple[list[Fact], _Who]:
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
        _apply_time(fact, when, now)
    return facts, who


def _relation_words() -> set[str]:
    return set(RELATIONS.replace("?", "").split("|"))


def _apply_time(fact: Fact, when: When, now: datetime) -> None:
    at = when.at
    if at is None:
        return
    end = when.end or at
    future = when.future
    if fact.category == "plan" and end < now:
        # "in April" said in December: next April
        at, end, future = at.replace(year=at.year + 1), end.replace(year=end.year + 1), True
    if fact.category == "plan" or (future and fact.statement):
        fact.occurred_at = at
        fact.expires_at = end + timedelta(days=1)
        if fact.category != "plan" and fact.statement:
            fact.category = "plan"
            person, _, kind = fact.slot.rpartition("|")
            if not kind or kind.startswith("activity:"):  # "I'm doing X next month": a plan
                fact.slot = f"{person + '|' if person else ''}plan:{_key(fact.statement)}"
    elif fact.category == "event":
        fact.occurred_at = at
    else:
        fact.valid_from = min(at, now)


# --- Chinese --------------------------------------------------------------------------------

ZH_RELATIONS = (
    "姐姐|妹妹|哥哥|弟弟|妈妈|母亲|爸爸|父亲|老婆|妻子|太太|丈夫|老公|男朋友|女朋友|儿子|女儿"
    "|孩子|朋友|室友|同事|老板|爷爷|奶奶|外公|外婆|父母|叔叔|阿姨"
)
ZH_PETS = (
    "[\u4e00-\u9fff]{0,2}?(?:狗|猫)|鹦鹉|仓鼠|兔子|鱼|乌龟|柯基|泰迪|金毛|哈士奇|拉布拉多|柴犬|边牧"
    "|英短|美短|布偶|暹罗|博美|比熊|萨摩耶"
)
_ZH_CLAUSES = re.compile(r"[，,。！!？?；;：:～~\n]+|(?:但是|不过(?!敏)|而且|可是|所以)")
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


def _zh_more(s: str, who: _Who, carry: _Clause, conf: float) -> list[Fact] | None:
    """Jobs at a place, new employers, shops, quitting a habit, pets named later."""
    p, n = who.prefix, who.name
    if m := re.match(r"^在(?P<v>生酮|节食|减肥|戒糖|断食|控糖)", s):
        return [Fact(f"{n}在{m.group('v')}。", f"{p}diet", "fact", conf, 0.7)]
    if m := re.match(r"^(?P<v>[^我你，,。]{1,6}?)停了$", s):
        return [Fact("", "", "fact", conf, 0.6, ends=[Ending(value=m.group("v"))])]
    if m := re.match(rf"^(?:家)?(?P<species>{ZH_PETS})(?:叫|名叫)(?P<name>[^，,。]{{1,6}})$", s):
        name = m.group("name")
        return [
            Fact(
                f"{n}养了一只叫{name}的{m.group('species')}。",
                f"{p}pet:{_key(name)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if m := re.match(r"^(?:现在)?(?:只|都|就)喝(?P<v>[^，,。]+?)了?$", s):
        value = m.group("v")
        return [Fact(f"{n}喝{value}。", f"{p}opinion:{_key(value)}", "preference", conf, 0.6)]
    m = re.match(r"^(?P<v>(?![有得患没])[^，,。]{1,6}?)$", s)
    if m and _ZH_CONDITION.fullmatch(m.group("v")):  # "体检说我贫血"
        value = m.group("v")
        return [Fact(f"{n}患有{value}。", f"{p}condition:{_key(value)}", "health", conf, 0.9)]
    if m := re.match(r"^是(?P<new>[^，,。不]{1,8})(?:而)?不是(?P<old>[^，,。]{1,8})$", s):
        return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]
    if m := re.match(r"^吃的(?:药)?(?:是|换成了?)(?P<v>[^，,。]{2,8})$", s):
        value = m.group("v")
        ends = [Ending(group=f"{p}medication")]
        return [
            Fact(
                f"{n}在服用{value}。", f"{p}medication:{_key(value)}", "health", 0.9, 0.9, ends=ends
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
    if carry.replace_kind == "medical-context" and (
        m := re.match(
            r"^(?:给我|帮我)?(?:换成|改成|换了|改用|改吃)(?:了)?(?P<new>[^，,。]+?)了?$", s
        )
    ):
        new = m.group("new")
        ends = [Ending(group=f"{p}medication")]
        return [
            Fact(f"{n}在服用{new}。", f"{p}medication:{_key(new)}", "health", 0.9, 0.9, ends=ends)
        ]
    if m := re.match(
        rf"^(?:又)?(?:捡了|领养了|收养了|买了|养了)(?:一只|一条|只|条)(?P<species>{ZH_PETS})$", s
    ):
        carry.species = m.group("species")
        return [
            Fact(
                f"{n}养了一只{carry.species}。", f"{p}pet:{_key(carry.species)}", "fact", conf, 0.7
            )
        ]
    if m := re.match(r"^从(?P<v>[^，,。]+?)(?:离职|辞职|退休)了?", s):
        ends = [Ending(slot=f"{p}employer"), Ending(slot=f"{p}job")]
        return [Fact("", "", "fact", conf, 0.7, ends=ends)]
    if m := re.match(r"^(?:过敏的|过敏源)(?:其实)?是(?P<v>[^，,。]+?)$", s):
        value = m.group("v")
        carry.last_group = f"{p}allergy"
        return [Fact(f"{n}对{value}过敏。", f"{p}allergy:{_key(value)}", "health", conf, 0.95)]
    if m := re.match(r"^(?:不是|没有|并不是)(?P<v>[^对，,。]{1,6}?)过敏$", s):
        slot = f"{p}allergy:{_key(m.group('v'))}"
        return [Fact("", slot, "health", conf, 0.9, ends=[Ending(slot=slot)])]
    if m := re.match(r"^(?:是)?(?P<v>[^对不，,。是]{1,6}?)过敏$", s):
        value = m.group("v")
        carry.last_group = f"{p}allergy"
        return [Fact(f"{n}对{value}过敏。", f"{p}allergy:{_key(value)}", "health", conf, 0.95)]
    if carry.last_group and (m := re.match(r"^(?:不是|而不是)(?P<v>[^，,。]{1,6})$", s)):
        group, carry.last_group = carry.last_group, ""
        head = group.rpartition("|")[2]
        slot = (
            f"{group.rpartition('|')[0] + '|' if '|' in group else ''}{head}:{_key(m.group('v'))}"
        )
        return [Fact("", slot, "health", conf, 0.9, ends=[Ending(slot=slot)])]
    if m := re.match(
        r"^(?:一直|每天|长期|还在|正在)?(?:在)?(?:吃|服用|服)(?P<v>[\u4e00-\u9fff]{2,8}?"
        r"(?:平|坦|林|素|酮|胺|醇|尔|利|汀|胍|片|胶囊|药|乐|唑|星|宁|韦))$",
        s,
    ):
        value = m.group("v")
        return [Fact(f"{n}在服用{value}。", f"{p}medication:{_key(value)}", "health", conf, 0.9)]
    if m := re.match(
        r"^(?:体检)?(?:查出|检查出|确诊|诊断出|查出来)(?:了|有)?(?P<v>[^，,。]+?)$", s
    ):
        value = m.group("v")
        return [Fact(f"{n}患有{value}。", f"{p}condition:{_key(value)}", "health", conf, 0.9)]
    if m := re.match(r"^(?:朋友|大家|别人|他们|家里人)(?:都)?(?:叫|喊)我(?P<v>[^，,。]{1,4})$", s):
        return [Fact(f"{n}的昵称是{m.group('v')}。", f"{p}nickname", "fact", conf, 0.7)]
    if m := re.match(r"^搬回(?:了)?(?:老家)?(?P<v>[^，,。]+?)了?$", s):
        return [Fact(f"{n}住在{m.group('v')}。", f"{p}home", "fact", conf, 0.8)]
    if m := re.match(rf"^(?:朋友|别人|家里)?送了我(?:一只|一条|只|条)(?P<species>{ZH_PETS})$", s):
        carry.species = m.group("species")
        return [
            Fact(
                f"{n}养了一只{carry.species}。", f"{p}pet:{_key(carry.species)}", "fact", conf, 0.7
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
            return [Fact(f"{n}在服用{new}。", f"{p}medication:{_key(new)}", "health", 0.9, 0.9)]
        return [Fact("", "", "correction", 0.9, 0.8, replace=(old, new))]
    if m := re.match(
        r"^(?:跳槽到|跳槽去|跳到|入职|加入)(?:了)?(?P<v>[^，,。]+?)(?:工作|上班)?了?$", s
    ):
        return [Fact(f"{n}在{m.group('v')}工作。", f"{p}employer", "fact", conf, 0.75)]
    if m := re.match(r"^在(?P<org>[^，,。]{1,12}?)(?:做|当|开)(?P<job>[^，,。]{1,10}?)(?:的)?$", s):
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
                f"{p}pet:{_key(name)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if m := re.match(r"^(?:改喝|改吃|改成喝|改成吃|开始喝|开始吃)(?:了)?(?P<v>[^，,。]+?)了?$", s):
        verb = "喝" if "喝" in m.group(0)[:4] else "吃"
        value = m.group("v")
        return [Fact(f"{n}{verb}{value}。", f"{p}opinion:{_key(value)}", "preference", conf, 0.6)]
    if m := re.match(rf"^(?:开始)?养(?:了)?(?:一只|一条|只|条|个)?(?P<species>{ZH_PETS})了?$", s):
        carry.species = m.group("species")
        return [
            Fact(
                f"{n}养了一只{carry.species}。", f"{p}pet:{_key(carry.species)}", "fact", conf, 0.7
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
            Fact("", "", "fact", conf, 0.6, ends=[Ending(slot=f"{p}pet:{_key(species)}")]),
            Fact(f"{n}养了一只叫{name}的{species}。", f"{p}pet:{_key(name)}", "fact", conf, 0.7),
        ]
    if carry.corrected and (m := re.match(r"^(?:应该)?是(?P<v>[\u4e00-\u9fff]{2,3})$", s)):
        carry.corrected = False
        return [Fact(f"{n}的名字是{m.group('v')}。", f"{p}name", "fact", 0.9, 0.9)]
    return None


def _zh_facts(clause: str, who: _Who, carry: _Clause, correction: bool) -> list[Fact]:
    p, n = who.prefix, who.name
    conf = 0.9 if correction else 0.8
    s = clause
    found = _zh_more(s, who, carry, conf)
    if found is not None:
        return found
    if m := re.match(r"^(?:(?P<neg>不|并不|其实不|没有)对|对)(?P<v>.+?)(?P<neg2>不)?过敏", s):
        value = m.group("v")
        slot = f"{p}allergy:{_key(value)}"
        if m.group("neg") or m.group("neg2"):
            carry.negated = ("zh-allergy", who)
            return [Fact("", slot, "health", conf, 0.9, ends=[Ending(slot=slot)])]
        return [Fact(f"{n}对{value}过敏。", slot, "health", conf, 0.95)]
    if m := re.match(r"^(?:是对|是)(?P<v>.+?)过敏", s):
        value = m.group("v")
        return [Fact(f"{n}对{value}过敏。", f"{p}allergy:{_key(value)}", "health", 0.9, 0.95)]
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
    if m := re.match(r"^(?:现在)?在(?P<v>.+?)(?:工作|上班)", s):
        return [Fact(f"{n}在{m.group('v')}工作。", f"{p}employer", "fact", conf, 0.75)]
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
                f"{p}pet:{_key(name)}",
                "fact",
                conf,
                0.7,
            )
        ]
    if m := re.match(rf"^(?:养了|养|有)(?:一只|一条|两只|只|条)(?P<species>{ZH_PETS})", s):
        return [
            Fact(
                f"{n}养了一只{m.group('species')}。",
                f"{p}pet:{_key(m.group('species'))}",
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
                    Ending(slot=f"{p}condition:{_key(value)}"),
                    Ending(group=f"{p}condition", value=value),
                ],
            )
        ]
    if m := re.match(r"^(?:有|得了|患有|被诊断出)(?P<v>.+)$", s):
        value = m.group("v").rstrip("了")
        if _ZH_CONDITION.fullmatch(value):
            return [Fact(f"{n}患有{value}。", f"{p}condition:{_key(value)}", "health", conf, 0.9)]
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
        return [Fact(text, f"{p}opinion:{_key(thing)}", "preference", conf, 0.6)]
    if m := re.match(r"^(?:不去|不打算去|取消了)(?P<v>.+?)了?$", s):
        return [
            Fact("", "", "plan", conf, 0.6, ends=[Ending(group=f"{p}plan", value=m.group("v"))])
        ]
    if m := re.match(r"^(?:打算|计划|准备|要|将要|想要|会)(?P<v>.{2,})$", s):
        value = m.group("v")
        return [Fact(f"{n}计划{value}。", f"{p}plan:{_key(value)}", "plan", 0.75, 0.6)]
    if m := re.match(r"^(?:已经)?(?:结婚了?|离婚了?|订婚了?|单身)", s):
        value = m.group(0).lstrip("已经")
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
        return [Fact(text, f"{p}event:{_key(m.group(0))}", "event", 0.8, 0.6)]
    return []


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


def _zh_parse(clause: str, who: _Who, carry: _Clause, correction: bool) -> list[Fact]:
    # "不是芒果，是菠萝": a value said before, corrected (across the two clauses too)
    if m := re.match(
        r"^(?:其实|而)?不是(?P<old>[^，,。]+?)[，,]?(?:而)?是(?P<new>[^，,。]+)$", clause
    ):
        return [Fact("", "", "correction", 0.9, 0.8, replace=(m.group("old"), m.group("new")))]
    if carry.last_group and (m := re.match(r"^(?:而)?不是(?P<v>[^，,。]{1,6})$", clause)):
        group, carry.last_group = carry.last_group, ""
        person, _, head = group.rpartition("|")
        slot = f"{person}|{head}:{_key(m.group('v'))}" if person else f"{head}:{_key(m.group('v'))}"
        return [Fact("", slot, "health", 0.9, 0.9, ends=[Ending(slot=slot)])]
    if m := re.match(
        rf"^(?:朋友|别人|家里人?)?送了我(?:一只|一条|只|条)(?P<species>{ZH_PETS})$", clause
    ):
        carry.species = m.group("species")
        text = f"用户养了一只{carry.species}。"
        return [Fact(text, f"pet:{_key(carry.species)}", "fact", 0.8, 0.7)]
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
    subject = _ZH_SUBJECT.match(clause)
    if subject is None:
        found = re.search(rf"我(?!们)(?:的)?(?P<rel>{ZH_RELATIONS})?", clause)
        if found and found.start() <= 8:  # "医生说我其实...", "跟你说个事，我..."
            subject = found
    if subject:
        rel = subject.group("rel")
        who = _Who(f"用户的{rel}", f"{rel}|") if rel else _Who("用户", "")
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


# A condition or a wish states nothing ("要是我住在海边就好了", "如果我是医生").
_ZH_UNREAL = re.compile(r"^(?:要是|如果|假如|假设|万一|倘若|若是|要不是|哪怕|但愿|希望)|就好了$")


def _chinese_clause(
    raw: str, carry: _Clause, now: datetime, previous: _Who
) -> tuple[list[Fact], _Who]:
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
        facts = _zh_facts(clause, who, _Clause(), True)
    else:
        facts = _zh_parse(clause, who, carry, correction)
        if facts and facts[0].slot.rpartition("|")[0]:
            who = _Who(
                f"用户的{facts[0].slot.rpartition('|')[0]}", facts[0].slot.rpartition("|")[0] + "|"
            )
        elif facts:
            who = _Who("用户", "")
    for fact in facts:
        if hedged:
            fact.confidence = min(fact.confidence, 0.5)
        _apply_time(fact, when, now)
    return facts, who


# --- entry ----------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u9fff]")


# The facts of the texts already read in the unit of work that opened `facts_remembered`,
# by (text, moment); None outside one.
_remembered: ContextVar[dict[tuple[str, datetime], list[Fact]] | None] = ContextVar(
    "facts_remembered", default=None
)


@contextmanager
def facts_remembered() -> Iterator[None]:
    """Within this block `facts_of` reads each (text, moment) once: an ingest job's
    extraction and then its session's offline summary read the same turns. What it
    remembers is plaintext, so it lives only as long as the block (one job), never in the
    process."""
    token = _remembered.set({})
    try:
        yield
    finally:
        _remembered.reset(token)


def facts_of(text: str, now: datetime) -> list[Fact]:
    """The atomic facts a user turn states, in order (a new list each call; the facts are
    shared within `facts_remembered`, and read, not changed, by their callers)."""
    remembered = _remembered.get()
    if remembered is None:
        return _facts_of(text, now)
    key = (text, now)
    if key not in remembered:
        remembered[key] = _facts_of(text, now)
    return list(remembered[key])


def _facts_of(text: str, now: datetime) -> list[Fact]:
    """The facts found, each health fact kept only if its value is a known drug, allergen or
    condition (`vocabulary`): a value that fits none is no fact, and ends nothing (the turn
    stays an episodic memory, which recall still finds). A change the rules cannot resolve
    to a new value disputes the facts it touches (`doubt`)."""
    facts = [
        fact
        for fact in _found(text, now)
        if _trusted(fact)
        and not (fact.statement and asserted_in_doubt(fact.statement, fact.group, text))
    ]
    disputes = disputes_of(text, _resolved(facts))
    if disputes:
        facts.append(Fact("", "", "health", 0.9, 0.9, disputes=disputes))
    return facts


def _resolved(facts: list[Fact]) -> Callable[[str, str], bool]:
    """What the turn's rules set or ended, as a test of (health group, value): a value is
    resolved when a fact or an ending of its group speaks of it, or an ending takes the whole
    group or slot; a whole group, when any fact or ending of it was read."""
    said: dict[str, list[str]] = {}
    whole: set[str] = set()
    for fact in facts:
        if fact.statement:
            said.setdefault(fact.group, []).append(fact.statement)
        for ending in fact.ends:
            if ending.slot or ending.group:
                group = ending.group or slot_group(ending.slot)
                said.setdefault(group, []).append(ending.value or ending.slot)
                if not ending.value:
                    whole.add(group)
            elif ending.value:  # "I'm off metformin now": whichever group the value names
                for group in HEALTH_GROUPS:
                    if vocabulary.CHECKS[group](ending.value):
                        said.setdefault(group, []).append(ending.value)

    def resolved(group: str, value: str) -> bool:
        if not value:
            return group in said
        return group in whole or any(
            speaks_of(text, value) or value in text for text in said.get(group, [])
        )

    return resolved


def _trusted(fact: Fact) -> bool:
    if _FIRST_PERSON.search(fact.statement):
        return False  # "The user's doctor took me off ...": whose words is not clear
    head = slot_group(fact.slot).rpartition("|")[2]
    if head == "home" and _ZH_NOT_A_HOME.search(fact.statement):
        return False
    check = vocabulary.CHECKS.get(head)
    return not fact.statement or check is None or check(fact.statement)


# A third-person statement that still speaks in the first person was cut from a clause the
# rules did not understand.
_FIRST_PERSON = re.compile(r"\b(?:me|my|myself|mine)\b|\bI\b")

# Inside a thing, or a night's lodging, is not where one lives ("住在购物车里", "住在一家民宿里").
_ZH_NOT_A_HOME = re.compile(r"(?:里|上)。$|酒店|宾馆|民宿|旅馆|青旅|客栈")


def _found(text: str, now: datetime) -> list[Fact]:
    carry = _Clause()
    facts: list[Fact] = []
    if _CJK.search(text):
        who = _Who("用户", "")
        for part in _ZH_CLAUSES.split(text):
            if part.strip():
                found, who = _chinese_clause(part, carry, now, who)
                facts.extend(found)
        return facts
    text = _expand(text)
    asides = re.findall(r"\(([^)]{3,120})\)", text)  # "(I'm a forklift operator at ...)"
    who = _SELF
    for sentence in [*re.split(r"(?<=[.!?])\s+|\n+", text), *asides]:
        for part in _CLAUSES.split(sentence):
            if part and part.strip():
                found, who = _english_clause(part, carry, now, who)
                facts.extend(found)
        who = _SELF
    renamed = re.search(
        r"\b(?:surname|last name|name)\b[^.!?]*?,\s*it is\s+" + _NAME + r"(?:\s+now)?", text, re.I
    )
    if renamed and not any(f.slot == "name" for f in facts):
        name = renamed.group("name")
        facts.append(Fact(_sentence(f"The user's name is {name}"), "name", "fact", 0.9, 0.9))
        carry.new_value = ""
    if carry.new_value:
        facts.extend(_attach_new_value(carry.new_value, facts))
    if any(f.slot == "employer" and f.statement for f in facts):
        # "left Brightwave, now at Northfield, same role": a new employer, not a new job
        for fact in facts:
            fact.ends = [e for e in fact.ends if e.slot != "job"]
    called = re.search(
        r"\b(?:everyone|everybody|people|friends|my friends|they|most people)\s+calls?\s+me\s+"
        + _NAME,
        text,
    )
    if called and not any(f.slot == "nickname" for f in facts):
        nickname = called.group("name")
        if any(f.slot == "name" and nickname not in f.statement for f in facts):
            facts.append(
                Fact(_sentence(f"The user goes by {nickname}"), "nickname", "fact", 0.8, 0.7)
            )
    names = [f for f in facts if f.slot == "name"]
    if len(names) > 1:  # "My name is Margaret ... everyone calls me Peggy": a nickname
        for fact in names[1:]:
            nickname = fact.statement.removeprefix("The user's name is ").rstrip(".")
            fact.statement, fact.slot = _sentence(f"The user goes by {nickname}"), "nickname"
    return facts


def _attach_new_value(value: str, facts: list[Fact]) -> list[Fact]:
    """Where "it's actually X" belongs: to the allergy or medication the turn ends, else, if
    X is a name, to the name."""
    groups = {e.group or slot_group(e.slot) for f in facts for e in f.ends}
    values = [v for v in re.split(r"\s*(?:,|\band\b|&)\s*", value) if v]
    for head, template in (
        ("allergy", "The user is allergic to {}"),
        ("medication", "The user takes {}"),
        ("condition", "The user has {}"),
    ):
        if head in groups:
            return [
                Fact(_sentence(template.format(v)), f"{head}:{_key(v)}", "health", 0.9, 0.9)
                for v in values
            ]
    if _bare_name(value.split(",")[0].strip()):
        name = value.split(",")[0].strip()
        return [Fact(_sentence(f"The user's name is {name}"), "name", "fact", 0.9, 0.9)]
    return []


def normal_slot(slot: str) -> str:
    """A slot named elsewhere (an LLM's "Allergy: Peanuts") in this module's form
    ("allergy:peanut"), so both extractors' facts meet in one slot."""
    person, _, rest = slot.strip().lower().rpartition("|")
    head, sep, value = rest.partition(":")
    head = re.sub(r"\s+", " ", head.strip())
    normal = f"{head}:{_key(value)}" if sep and value.strip() else head
    return f"{person.strip()}|{normal}" if person.strip() else normal
