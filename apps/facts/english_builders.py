"""What each English predicate rule (`english_predicates.RULES`) makes of its match: a
builder per kind of fact, which returns the facts, or None to pass the clause on to the next
rule (pure: no Django, no database).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps.facts import vocabulary
from apps.facts.english_words import (
    as_sentence,
    bare_name,
    clean_value,
    is_occupation,
    job_fact,
    value_of,
)
from apps.facts.grammar import DEMONYM, NOT_NAME, ClauseState, Ending, Fact, Who, stems, value_key


@dataclass(frozen=True)
class Predicate:
    """What a builder reads besides its match: whom the clause is about, whether it corrects
    an earlier one, and the turn's carried state."""

    who: Who
    correction: bool
    carry: ClauseState

    @property
    def p(self) -> str:
        """The slot prefix of whom the clause is about ("" for the user, "sister|")."""
        return self.who.prefix

    @property
    def conf(self) -> float:
        return 0.9 if self.correction else 0.8


def negated_in(m: re.Match[str]) -> bool:
    """Whether the match took a negation ("not", "no longer", "never")."""
    return bool((m.groupdict().get("neg") or "").strip())


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


# Where a value's noun phrase ends and the sentence goes on ("tree nuts after all, it was").
_PHRASE_END = re.compile(
    r"\b(?:after|any\s?more|it|its|was|is|but|so|because|since|though|now)\b|[^\w\s,'&-]", re.I
)


def allergy(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "allergy" rule."""
    who, carry, p, conf = s.who, s.carry, s.p, s.conf
    negated = negated_in(m)
    value = value_of(m)
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


def _name(kind: str, m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "name" / "name-bare" rules."""
    who, p, conf = s.who, s.p, s.conf
    g = m.groupdict()
    name = (g.get("name") or g.get("v") or "").strip()
    if kind == "name-bare" and not bare_name(name):
        return None
    name = clean_value(name)
    if not name:
        return None
    text = f"{who.name}'s name is {name}" if who.prefix else f"The user's name is {name}"
    return [Fact(as_sentence(text), f"{p}name", "fact", conf, 0.9)]


def diet(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "diet" rule."""
    who, p, conf = s.who, s.p, s.conf
    negated = negated_in(m)
    value = value_of(m).lower()
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


def diet_not(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "diet-not" / "diet-stop" rules."""
    who, p, conf = s.who, s.p, s.conf
    value = value_of(m)
    value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
    verb = "drink" if "alcohol" in value else "eat"
    text = f"{who.name} {who.verb('does', 'do')} not {verb} {value}"
    return [Fact(as_sentence(text), f"{p}diet", "fact", conf, 0.8)]


def home(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "home" rule."""
    who, p, conf = s.who, s.p, s.conf
    negated = negated_in(m)
    value = _WITH_WHOM.sub("", value_of(m))  # "Leeds with my partner": the place is Leeds
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


def origin(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "origin" rule."""
    who, p, conf = s.who, s.p, s.conf
    value = value_of(m)
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


def _job_or_employer(kind: str, m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "job" / "employer" rules."""
    who, p, conf = s.who, s.p, s.conf
    negated = negated_in(m)
    value = value_of(m)
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
            job_fact(who, split.group("job"), conf),
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
            job = job_fact(who, split.group("job"), conf)
            org = f"{who.name} {who.verb('works', 'work')} at {split.group('org')}"
            return [job, Fact(as_sentence(org), f"{p}employer", "fact", conf, 0.75), *extra]
        article = "an" if value[:1].lower() in "aeiou" else "a"
        text = f"{who.name} {who.verb('works', 'work')} as {article} {value}"
    else:
        text = f"{who.name} {who.verb('works', 'work')} at {value}"
    return [Fact(as_sentence(text), f"{p}{kind}", "fact", conf, 0.75), *extra]


def pet_named(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "pet-named" rule."""
    who, carry, p, conf = s.who, s.carry, s.p, s.conf
    g = m.groupdict()
    name = g["name"]
    text = f"{who.name} {who.verb('has', 'have')} a {carry.species or 'pet'} named {name}"
    return [Fact(as_sentence(text), f"{p}pet:{value_key(name)}", "fact", conf, 0.7)]


def booked(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "booked" rule."""
    who, p = s.who, s.p
    value = value_of(m)
    if len(value.split()) < 2:
        return None
    text = f"{who.name} booked {value}"
    return [Fact(as_sentence(text), f"{p}plan:{value_key(value)}", "plan", 0.75, 0.6)]


def gone_off(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "gone-off" rule."""
    p, conf = s.p, s.conf
    g = m.groupdict()
    value = clean_value(g.get("v") or g.get("v2") or "")
    if not value:
        return None
    return [Fact("", "", "preference", conf, 0.6, ends=[Ending(group=f"{p}opinion", value=value)])]


def person(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "person" rule."""
    who, p, conf = s.who, s.p, s.conf
    g = m.groupdict()
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


def medication_for(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "medication-for" rule."""
    who, p, conf = s.who, s.p, s.conf
    g = m.groupdict()
    value, cond = value_of(m), g["cond"]
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


def switched_to(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "switched-to" rule."""
    who, p, conf = s.who, s.p, s.conf
    value = value_of(m)
    text = f"{who.name} switched to {value}"
    return [Fact(as_sentence(text), f"{p}habit:{value_key(value)}", "preference", conf, 0.5)]


def come_around(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "come-around" rule."""
    who, p, conf = s.who, s.p, s.conf
    value = value_of(m)
    text = f"{who.name} {who.verb('likes', 'like')} {value}"
    return [Fact(as_sentence(text), f"{p}opinion:{value_key(value)}", "preference", conf, 0.6)]


def diet_eat(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "diet-eat" rule."""
    who, p, conf = s.who, s.p, s.conf
    value = value_of(m)
    text = f"{who.name} {who.verb('eats', 'eat')} {value}"
    return [Fact(as_sentence(text), f"{p}diet", "fact", conf, 0.7)]


def manage(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "manage" rule."""
    who, p, conf = s.who, s.p, s.conf
    verb = m.group(0).split()[0].lower()
    verb = {"manage": "manages", "run": "runs", "own": "owns", "opened": "opened"}.get(verb, verb)
    text = f"{who.name} {verb} {value_of(m)}"
    return [Fact(as_sentence(text), f"{p}job", "fact", conf, 0.7)]


def admitted(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "admitted" rule."""
    who, p, conf = s.who, s.p, s.conf
    value = value_of(m)
    text = f"{who.name} got into {value}"
    return [Fact(as_sentence(text), f"{p}event:{value_key(value)}", "event", conf, 0.7)]


def plan_to(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "plan-to" rule."""
    who, p = s.who, s.p
    value = value_of(m)
    verb = m.group(0).split()[0].lower()
    text = f"{who.name} {who.verb('is', 'are')} {verb} to {value}"
    return [Fact(as_sentence(text), f"{p}plan:{value_key(value)}", "plan", 0.75, 0.6)]


def fired(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "fired" rule."""
    p, conf = s.p, s.conf
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


def pet_gone(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "pet-gone" rule."""
    p, conf = s.p, s.conf
    g = m.groupdict()
    species = re.sub(r"s$", "", g["species"].lower())
    return [Fact("", "", "fact", conf, 0.6, ends=[Ending(group=f"{p}pet", value=species)])]


def retired(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "retired" rule."""
    who, p, conf = s.who, s.p, s.conf
    text = f"{who.name} {who.verb('is', 'are')} retired"
    return [
        Fact(as_sentence(text), f"{p}job", "fact", conf, 0.7, ends=[Ending(slot=f"{p}employer")])
    ]


def quit(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "quit" rule."""
    p, conf = s.p, s.conf
    value = value_of(m)
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


def no_longer(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "no-longer" rule."""
    conf = s.conf
    value = value_of(m)
    if not value:
        return None
    return [Fact("", "", "fact", conf, 0.7, ends=[Ending(value=value)])]


def marital(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "marital" rule."""
    who, p, conf = s.who, s.p, s.conf
    g = m.groupdict()
    negated = negated_in(m)
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


def pet(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "pet" rule."""
    who, carry, p, conf = s.who, s.carry, s.p, s.conf
    g = m.groupdict()
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


def family(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "family" rule."""
    who, p, conf = s.who, s.p, s.conf
    g = m.groupdict()
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


def _condition(kind: str, m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "condition" / "condition-adj" rules."""
    who, p, conf = s.who, s.p, s.conf
    g = m.groupdict()
    negated = negated_in(m)
    value = value_of(m) or clean_value(g.get("v2") or "")
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


def _medication(kind: str, m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "medication" / "medication-stop" rules."""
    who, p, conf = s.who, s.p, s.conf
    negated = negated_in(m)
    value = value_of(m)
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


def opinion(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "opinion" rule."""
    who, p, conf = s.who, s.p, s.conf
    g = m.groupdict()
    negated = negated_in(m)
    value = value_of(m)
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


def _plan(kind: str, m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "plan" / "plan-progressive" rules."""
    who, p, conf = s.who, s.p, s.conf
    negated = negated_in(m)
    value = value_of(m) if kind == "plan" else m.group(0).split(None, 1)[1]
    value = clean_value(value) if kind == "plan-progressive" else value
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


def cancel(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "cancel" rule."""
    p, conf = s.p, s.conf
    value = value_of(m)
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


def event(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "event" rule."""
    who, p = s.who, s.p
    g = m.groupdict()
    verb = m.group(0).split()[0]
    rest = clean_value(g.get("v") or "")
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
    m: re.Match[str],
    s: Predicate,
    verbs: tuple[str, str],
    slot: str,
    category: str,
    importance: float,
) -> list[Fact] | None:
    """ "<who> <verb> <value>" in `slot` ("{key}" in it: the value's key), or None."""
    value = value_of(m)
    if not value:
        return None
    text = f"{s.who.name} {s.who.verb(*verbs)} {value}"
    slot = s.p + slot.format(key=value_key(value))
    return [Fact(as_sentence(text), slot, category, s.conf, importance)]


def language(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "language" rule."""
    return _verb_fact(m, s, ("speaks", "speak"), "language:{key}", "fact", 0.5)


def study(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "study" rule."""
    return _verb_fact(m, s, ("studies", "study"), "study", "fact", 0.6)


def hobby(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "hobby" rule."""
    return _verb_fact(m, s, ("plays", "play"), "hobby:{key}", "preference", 0.5)


def activity(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "activity" rule."""
    who, p = s.who, s.p
    value = value_of(m)
    if len(value.split()) < 2:
        return None
    text = f"{who.name} {who.verb('is', 'are')} {value}"
    return [Fact(as_sentence(text), f"{p}activity:{value_key(value)}", "fact", 0.75, 0.5)]


def age(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "age" rule."""
    who, p, conf = s.who, s.p, s.conf
    g = m.groupdict()
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


def identity(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """The facts of the "identity" rule."""
    who, p, conf = s.who, s.p, s.conf
    negated = negated_in(m)
    value = value_of(m)
    if not value or re.search(r"\b(?:kind|type|sort) of\b", value, re.I):
        return None
    value = re.sub(r"\s+(?:anymore|any more|any longer)$", "", value)
    value = _FOR_SO_LONG.sub("", value)  # "a nurse at St Mary's for 12 years now"
    if re.match(r"(?:have|has)\s", m.group(0), re.I) and not is_occupation(
        re.split(r"\s+(?:at|for|in|with)\s", value, maxsplit=1)[0]
    ):
        return None  # "have been a fan of jazz", "been a while": what one has been, a job
    if negated:
        return [Fact("", "", "fact", conf, 0.6, ends=[Ending(value=value)])]
    article = "an" if value[:1].lower() in "aeiou" else "a"
    split = re.match(r"^(?P<job>.+?)\s+(?P<prep>at|for|in|with)\s+(?P<where>.+)$", value)
    where = split.group("where") if split else ""
    if split and is_occupation(split.group("job")) and not re.search(r"(?-i:[A-Z])", where):
        return [job_fact(who, split.group("job"), conf)]
    if split and is_occupation(split.group("job")):
        job = job_fact(who, split.group("job"), conf)
        where = split.group("where")
        if split.group("prep") == "in":
            text = f"{who.name} {who.verb('lives', 'live')} in {where}"
            return [job, Fact(as_sentence(text), f"{p}home", "fact", conf, 0.75)]
        text = f"{who.name} {who.verb('works', 'work')} at {where}"
        return [job, Fact(as_sentence(text), f"{p}employer", "fact", conf, 0.75)]
    if is_occupation(value):
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


def name(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _name("name", m, s)


def name_bare(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """A capitalised word after "I'm" is a name only when it reads as one ("I'm Priya")."""
    return _name("name-bare", m, s)


def job(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _job_or_employer("job", m, s)


def employer(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _job_or_employer("employer", m, s)


def employer_after_leaving(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    """Being at a place says where one works only right after leaving an employer."""
    return employer(m, s) if s.carry.left_employer else None


def condition(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _condition("condition", m, s)


def condition_adj(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _condition("condition-adj", m, s)


def medication(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _medication("medication", m, s)


def medication_stop(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _medication("medication-stop", m, s)


def plan(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _plan("plan", m, s)


def plan_progressive(m: re.Match[str], s: Predicate) -> list[Fact] | None:
    return _plan("plan-progressive", m, s)
