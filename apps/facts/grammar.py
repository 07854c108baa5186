"""Slots, endings and the closed word classes every language's rules share, and
how a statement speaks of a value (pure: no Django, no database).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from apps.facts.doubt import Dispute

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


def value_key(value: str) -> str:
    return " ".join(sorted(stems(value))) or value.strip().lower()


RELATIONS = (
    "wife|husband|partner|spouse|boyfriend|girlfriend|fianc[eé]e?|mother|mom|mum|father|dad"
    "|parents|sister|brother|siblings|son|daughter|kids|children|child|baby|grandmother"
    "|grandma|grandfather|grandpa|grandparents|aunt|uncle|cousin|niece|nephew|friend|best friend"
    "|roommate|flatmate|neighbou?r|boss|manager|colleague|coworker|co-worker|teacher|doctor"
    "|mother-in-law|father-in-law|sister-in-law|brother-in-law|twin"
)
PLURAL_RELATIONS = {"parents", "siblings", "kids", "children", "grandparents"}
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
NOT_OCCUPATION = re.compile(
    rf"(?:{_FAMILY}|member|beginner|fan|lover|newcomer|foreigner|winner|loser|owner|user"
    r"|customer|patient|resident|citizen|native|adult|parent|person|introvert|extrovert"
    r"|perfectionist|optimist|pessimist|vegetarian|vegan|pescatarian|smoker|drinker|runner"
    r"|swimmer|reader|gamer|sleeper|eater|early riser|night owl)$",
    re.I,
)
CONDITION = re.compile(
    r"(?:diabetes|asthma|epilepsy|hypertension|high blood pressure|low blood pressure|migraines?"
    r"|arthritis|eczema|psoriasis|celiac disease|coeliac disease|adhd|autism|depression|anxiety"
    r"|insomnia|cancer|a heart condition|heart disease|anemia|anaemia|gout|lupus|covid|the flu"
    r"|a cold|allergies|hay fever|ibs|gerd|acid reflux|\w+itis|\w+osis|\w+emia|\w+ism"
    r"|\w+ disease|\w+ disorder|\w+ syndrome|\w+ sensitivity|\w+ dysfunction)",
    re.I,
)
TYPED_CONDITION = rf"(?:type\s+\d\s+|chronic\s+|mild\s+|severe\s+)?{CONDITION.pattern}"
DEMONYM = re.compile(
    r"^(?:american|british|english|scottish|welsh|irish|canadian|mexican|brazilian|argentinian"
    r"|chilean|colombian|peruvian|french|german|italian|spanish|portuguese|dutch|belgian|swiss"
    r"|austrian|swedish|norwegian|danish|finnish|polish|czech|russian|ukrainian|greek|turkish"
    r"|egyptian|moroccan|nigerian|kenyan|ethiopian|south african|indian|pakistani|bangladeshi"
    r"|chinese|japanese|korean|vietnamese|thai|filipino|indonesian|malaysian|singaporean"
    r"|australian|new zealander|israeli|iranian|iraqi|saudi|emirati|lebanese|jewish|muslim"
    r"|christian|catholic|buddhist|hindu|atheist|asian|european|african|latino|latina)$",
    re.I,
)
NOT_NAME = re.compile(
    r"^(?:fine|good|great|ok|okay|here|back|sorry|sure|ready|done|home|tired|busy|happy|sad"
    r"|new|excited|afraid|glad|hungry|sick|well|not|so|very|just|also|still|really|actually"
    r"|going|trying|looking|thinking|learning|working|living|moving|planning|allergic)\b",
    re.I,
)


@dataclass
class Who:
    """Whom a clause is about: the user, or one of their people."""

    name: str  # "The user", "The user's sister"
    prefix: str  # "" for the user, "sister|" for their sister: slots per person
    plural: bool = False

    def verb(self, singular: str, plural: str) -> str:
        return plural if self.plural else singular


SELF = Who("The user", "")


def _self_or_them(who: Who, fact: str) -> str:
    return f"{who.name} {fact}"


class ClauseState:
    """State carried between the clauses of one turn (a correction's new value)."""

    def __init__(self) -> None:
        self.negated: tuple[str, Who] | None = None  # the rule kind of the last negation
        self.replace_old = ""  # "不是X" / "停了X": the value the next clause replaces
        self.replace_kind = ""  # "medication" after "停了X": "换成Y" is a new medication
        self.species = ""  # the last pet named without its name yet
        self.corrected = False  # a clause that only said "I got it wrong" ("打错了")
        self.last_group = ""  # the slot kind just stated ("过敏的是X"): "不是Y" negates its Y
        self.only = False  # "I'm only allergic to X": the other allergies end
        self.renaming = False  # "we renamed the parrot ... he's Captain now"
        self.new_value = ""  # "Correction: it's actually cashews": a value whose slot comes later
        self.left_employer = False  # a clause ended an employer ("I left Spotify")
