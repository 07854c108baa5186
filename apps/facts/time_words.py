"""Time words out of a clause and into structured time: "last week", "next month",
"下个月" (pure: no Django, no database).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from apps.facts.grammar import Fact, value_key

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


def apply_time(fact: Fact, when: When, now: datetime) -> None:
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
                fact.slot = f"{person + '|' if person else ''}plan:{value_key(fact.statement)}"
    elif fact.category == "event":
        fact.occurred_at = at
    else:
        fact.valid_from = min(at, now)
