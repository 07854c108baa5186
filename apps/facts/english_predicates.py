"""The English predicate rules: what a clause says of whom it is about, once its subject is
known ("[I] am allergic to shellfish", "[my sister] lives in Leeds"), as a table read in order
(pure: no Django, no database).

Each rule's pattern reads the predicate from its start; its builder (`english_builders`, one
per kind of fact) turns the match into facts or passes the predicate on to the next rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from apps.facts import english_builders as build
from apps.facts.english_builders import Predicate
from apps.facts.english_words import NAME, NAMES
from apps.facts.grammar import (
    DIETS,
    FOOD_GROUPS,
    MARITAL,
    PETS,
    TYPED_CONDITION,
    ClauseState,
    Fact,
    Who,
)
from apps.facts.table import Rule, first_found

# The kinds whose negation a following clause may give a new value ("I'm not allergic to
# peanuts, it's shellfish"): `ClauseState.negated`.
NEGATABLE = frozenset(
    {
        "allergy",
        "home",
        "job",
        "employer",
        "diet",
        "condition",
        "condition-adj",
        "medication",
        "opinion",
        "marital",
    }
)


def predicate_facts(predicate: str, who: Who, carry: ClauseState, correction: bool) -> list[Fact]:
    """The facts of the first rule (RULES) that gives any for `predicate`, said of `who`;
    [] when none does. An employer ended is noted in `carry` (the next clause may say the
    new one), and so is a negation a new value may follow."""
    found = first_found(RULES, predicate, Predicate(who, correction, carry))
    if found is None:
        return []
    facts = found.facts
    if any(
        e.slot.endswith("employer") or e.group.endswith("employer") for f in facts for e in f.ends
    ):
        carry.left_employer = True
    if found.match.groupdict().get("neg") and found.rule.kind in NEGATABLE:
        carry.negated = (found.rule.kind, who)
    return facts


def _rule(
    name: str,
    kind: str,
    slot: str,
    builder: Callable[[re.Match[str], Predicate], list[Fact] | None],
    note: str,
    regex: str,
) -> Rule[Predicate]:
    return Rule(name, re.compile(regex, re.I), slot, builder, "en", note, kind=kind)


_NEG = r"(?P<neg>not\s+|no\s+longer\s+|never\s+)?"
_BE = r"(?:am|is|are|have been|has been)\s+"
# A word shaped like a drug's name (its suffix): "lisinopril", "metformin", "sertraline".
_DRUG = (
    r"[\w-]+(?:pril|sartan|olol|statin|pine|formin|azole|cillin|mycin|oxetine|aline|pam"
    r"|lam|zide|prazole|tidine|profen|amine|ine|ide|one|mab|nib|xaban|gliptin|lukast)"
)

# In order: the first rule whose pattern matches and whose builder gives facts wins.
RULES: tuple[Rule[Predicate], ...] = (
    _rule(
        "allergy-react-to",
        "allergy",
        "allergy",
        build.allergy,
        'A reaction to something is an allergy: "I react badly to penicillin".',
        r"^(?:react|reacts|am reacting|break out)\s+(?:badly\s+)?to\s+(?P<v>.+)",
    ),
    _rule(
        "diet-went",
        "diet",
        "diet",
        build.diet,
        'A diet taken up: "I went vegan last year".',
        r"^(?:went|became|turned|switched to|have gone|has gone|am going|is going"
        r"|went back)"
        rf"\s+(?:fully\s+|full\s+|completely\s+|totally\s+)?(?:an?\s+)?(?P<v>{DIETS})\b",
    ),
    _rule(
        "home-in",
        "home",
        "home",
        build.home,
        'Being in a named place is living there: "I\'m still in Leeds".',
        r"^(?:am|is|are)\s+(?:still\s+)?(?:out\s+|over\s+|back\s+|based\s+|stuck\s+)?in\s+"
        r"(?P<v>(?-i:[A-Z][a-z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]+)*"
        r"|(?-i:[a-z])[\w.'-]+(?:\s+(?-i:[a-z])[\w.'-]+){0,2})",
    ),
    _rule(
        "employer-after-leaving",
        "employer-after-leaving",
        "employer",
        build.employer_after_leaving,
        'After leaving an employer, being at a firm is working there: "I\'m at Shopify now".',
        r"^(?:am|is)\s+(?:now\s+)?at\s+(?P<v>(?-i:[A-Z])[\w&'.-]*(?:\s+(?-i:[A-Z])[\w&'.-]*)*)"
        r"(?:\s+now)?(?:,.*)?$",
    ),
    _rule(
        "medication-started",
        "medication",
        "medication",
        build.medication,
        'A drug started: "I started taking metformin".',
        r"^(?:started|start|am starting|began|begun)\s+(?:taking|on)\s+"
        r"(?P<v>(?!an?\b|the\b|my\b|some\b)[\w-]+)",
    ),
    _rule(
        "medication-on-drug",
        "medication",
        "medication",
        build.medication,
        "Being on a word shaped like a drug's name: \"I'm on lisinopril\".",
        rf"^(?:am|is)\s+(?:now\s+)?on\s+(?P<v>{_DRUG})\b",
    ),
    _rule(
        "medication-taking-dose",
        "medication",
        "medication",
        build.medication,
        'Taking something with a dose or a schedule: "taking sertraline 50mg".',
        r"^(?:am\s+|is\s+)?taking\s+(?P<v>(?!an?\b|the\b|my\b|some\b|care\b|time\b|a\b)[\w-]+)"
        r"(?=\s+\d+\s*(?:mg|mcg|g|ml|iu)\b|\s+(?:daily|every|each|twice|once|for)\b|\s*$)",
    ),
    _rule(
        "medication-off",
        "medication-stop",
        "medication",
        build.medication_stop,
        'Coming off a drug stops it: "I\'m finally off the prednisone".',
        r"^(?:am|is|came|come|coming|finished tapering|tapered|tapering|went|got|am now)"
        r"\s+(?:completely\s+|fully\s+|finally\s+)?off\s+(?:the\s+|my\s+)?"
        r"(?P<v>(?!over\b|for\b|it\b|of\b|them\b|that\b)[\w-]+)",
    ),
    _rule(
        "pet-named",
        "pet-named",
        "pet",
        build.pet_named,
        'The name given to the pet just mentioned: "named her Miso".',
        r"^(?:named|called)\s+(?:him|her|it|them)\s+" + NAME,
    ),
    _rule(
        "marital-got",
        "marital",
        "marital",
        build.marital,
        'A marriage, engagement or divorce that happened: "just got engaged to Sam".',
        r"^(?:just\s+|finally\s+|officially\s+|recently\s+)?(?:got\s+)?"
        rf"(?P<v>married|engaged|divorced)\b(?:\s+to\s+{NAME})?",
    ),
    _rule(
        "booked",
        "booked",
        "plan",
        build.booked,
        'Something booked or signed up for is a plan: "I booked flights to Lisbon".',
        r"^(?:booked|planned|scheduled|arranged|signed up for|registered for|enrolled in)"
        r"\s+(?:a\s+|my\s+|our\s+|the\s+)?(?P<v>.+)",
    ),
    _rule(
        "cancel-had-to",
        "cancel",
        "plan",
        build.cancel,
        'A plan called off ends: "had to cancel my trip to Rome".',
        r"^(?:had to\s+|have to\s+|going to\s+|will\s+|need to\s+)?(?:cancel|cancell?ed"
        r"|call off|called off|postpone|postponed|scrap|scrapped)\s+"
        r"(?:my\s+|our\s+|the\s+)?(?P<v>.+)",
    ),
    _rule(
        "gone-off",
        "gone-off",
        "opinion",
        build.gone_off,
        'A taste lost ends the liking: "I\'ve gone off coffee", "I\'m so over sushi".',
        r"^(?:have|has)?\s*(?:gone|went|go)\s+off\s+(?P<v>.+)"
        r"|^(?:am|is)\s+(?:so\s+)?(?:over|done with|sick of|tired of)\s+(?P<v2>.+)",
    ),
    _rule(
        "person",
        "person",
        "opinion",
        build.person,
        'A kind of person one is: "I\'m a cat person", "a jazz fan".',
        r"^(?:am|is)\s+(?:an?\s+)(?P<v>[\w-]+)\s+(?:person|fan|lover|addict)\b",
    ),
    _rule(
        "age-turned",
        "age",
        "age",
        build.age,
        'An age reached: "officially 40", "just turned 30".',
        r"^(?:officially|now|just turned|turning|turned)\s+(?P<v>\d{1,3})\b",
    ),
    _rule(
        "allergy-allergic-to",
        "allergy",
        "allergy",
        build.allergy,
        'An allergy or intolerance, or its negation: "I\'m allergic to shellfish".',
        rf"^(?:{_BE})?{_NEG}(?:severely\s+|very\s+|mildly\s+)?(?:allergic"
        r"|intolerant)\s+to\s+(?P<v>.+)",
    ),
    _rule(
        "allergy-have-an",
        "allergy",
        "allergy",
        build.allergy,
        'An allergy had, or not: "I have a peanut allergy".',
        rf"^(?:do\s+|does\s+)?{_NEG}(?:have|has)\s+(?:an?\s+)?(?P<v>[\w-]+(?:\s+[\w-]+)?)\s+(?:allergy"
        r"|intolerance)",
    ),
    _rule(
        "name-called",
        "name",
        "name",
        build.name,
        'A name one is called: "I\'m called Liz".',
        r"^(?:am|is|was)\s+called\s+" + NAME,
    ),
    _rule(
        "name-go-by",
        "name",
        "name",
        build.name,
        'A name one goes by: "I go by Liz".',
        r"^(?:go|goes)\s+by\s+" + NAME,
    ),
    _rule(
        "fired",
        "fired",
        "job",
        build.fired,
        'Losing a job ends the job and the employer: "I got laid off".',
        r"^(?:got|was|were|have been|has been)\s+(?:fired|laid off|let go|made redundant)\b",
    ),
    _rule(
        "lost-job",
        "fired",
        "job",
        build.fired,
        'A job lost ends the job and the employer: "I lost my job".',
        r"^(?:lost)\s+(?:my|his|her|their)\s+job\b",
    ),
    _rule(
        "pet-gone",
        "pet-gone",
        "pet",
        build.pet_gone,
        'A pet no longer had: "I don\'t have the dog anymore".',
        r"^(?:do\s+|does\s+)?(?:not|no\s+longer)\s+(?:have"
        rf"|has|own|owns)\s+(?:an?\s+|the\s+|my\s+)?(?P<species>{PETS})\b",
    ),
    _rule(
        "diet-is",
        "diet",
        "diet",
        build.diet,
        'A diet one is, or no longer is: "I\'m vegetarian".',
        rf"^{_BE}{_NEG}(?:an?\s+|strictly\s+|fully\s+|now\s+)*(?P<v>{DIETS})\b",
    ),
    _rule(
        "diet-following",
        "diet",
        "diet",
        build.diet,
        'A named diet followed: "I\'m on a keto diet".',
        rf"^{_BE}(?:on|following)\s+an?\s+(?P<v>[\w-]+)\s+diet",
    ),
    _rule(
        "diet-no-more",
        "diet-not",
        "diet",
        build.diet_not,
        'A food group given up: "no more meat".',
        rf"^no\s+more\s+(?P<v>(?:{FOOD_GROUPS})\b)",
    ),
    _rule(
        "diet-cut-out",
        "diet-stop",
        "diet",
        build.diet_not,
        'A food group cut out: "I cut out dairy".',
        rf"^(?:cut|cutting)\s+(?:out\s+)?(?P<v>(?:{FOOD_GROUPS})\b)",
    ),
    _rule(
        "diet-do-not-eat",
        "diet-not",
        "diet",
        build.diet_not,
        'A food group not eaten: "I don\'t eat meat anymore".',
        r"^(?:do\s+|does\s+)?(?P<neg>not\s+|no\s+longer\s+"
        rf"|never\s+)(?:eat|eats|drink|drinks)\s+(?P<v>(?:{FOOD_GROUPS})\b.*)",
    ),
    _rule(
        "diet-stopped-eating",
        "diet-stop",
        "diet",
        build.diet_not,
        'A food group one stopped eating: "I gave up eating pork".',
        rf"^(?:stopped|quit|gave up)\s+(?:eating|drinking)\s+(?P<v>(?:{FOOD_GROUPS})\b.*)",
    ),
    _rule(
        "home-moved-to",
        "home",
        "home",
        build.home,
        'A move that happened: "I\'ve just moved to Bristol".',
        r"^(?:have|has)\s+(?:just\s+)?(?:moved|relocated)\s+(?:back\s+)?(?:in)?to\s+(?P<v>.+)",
    ),
    _rule(
        "home-live-in",
        "home",
        "home",
        build.home,
        'Where one lives, or no longer does: "I live in Leeds".',
        rf"^(?:do\s+|does\s+)?{_NEG}(?:live|lives|am living|is living"
        r"|are living|reside|resides|am based|is based|am staying"
        r"|is staying|just moved|moved|relocated|moved back)\s+"
        r"(?:back\s+|put\s+|up\s+|down\s+|over\s+|out\s+)?(?:in"
        r"|to|at)\s+(?P<v>.+)",
    ),
    _rule(
        "origin",
        "origin",
        "origin",
        build.origin,
        'Where one is from: "I\'m originally from Porto".',
        r"^(?:am|is|are)\s+(?:originally\s+)?from\s+(?P<v>.+)",
    ),
    _rule(
        "job-work-as",
        "job",
        "job",
        build.job,
        'A job one works as, or no longer does: "I work as a paramedic".',
        rf"^(?:do\s+|does\s+)?{_NEG}(?:work|works|am working"
        r"|is working|started working|started a new job|got a (?:new\s+)?job"
        r"|have been working|has been working)\s+(?:\w+ly\s+"
        r"|full[- ]time\s+|part[- ]time\s+|now\s+)?as\s+(?:an?\s+)?(?P<v>.+)",
    ),
    _rule(
        "employer-work-at",
        "employer",
        "employer",
        build.employer,
        'Where one works, or no longer does: "I work at Siemens".',
        rf"^(?:do\s+|does\s+)?{_NEG}(?:work|works|am working"
        r"|is working|started working|got a (?:new\s+)?job"
        r"|have been working|has been working|started at)\s+(?:at"
        r"|for)\s+(?P<v>.+)",
    ),
    _rule(
        "employer-joined",
        "employer",
        "employer",
        build.employer,
        'A named organisation joined, not a club or group: "joined Stripe".',
        r"^(?:joined)\s+(?P<v>(?-i:[A-Z])(?!.*\b(?:club|group|community|church|team"
        r"|class|gym|league|choir|band|society|association|circle|crew|squad)\b).+)",
    ),
    _rule(
        "retired-am",
        "retired",
        "job",
        build.retired,
        'Being retired: "I\'m retired now".',
        r"^(?:am|is|are)\s+(?:now\s+)?retired\b",
    ),
    _rule(
        "retired-have",
        "retired",
        "job",
        build.retired,
        'Having retired: "I retired in May".',
        r"^(?:retired|have retired|has retired)\b",
    ),
    _rule(
        "medication-stopped-taking",
        "medication-stop",
        "medication",
        build.medication_stop,
        'A drug one stopped taking: "I stopped taking sertraline".',
        r"^(?:stopped|quit)\s+taking\s+(?P<v>.+)",
    ),
    _rule(
        "quit-notice",
        "fired",
        "job",
        build.fired,
        'Quitting or handing in one\'s notice ends the job: "I handed in my notice".',
        r"^(?:quit|resigned|handed in my notice|gave notice|gave my notice)\s*$"
        r"|^(?:handed|put)\s+in\s+my\s+(?:notice|two\s+weeks|resignation)\b",
    ),
    _rule(
        "employer-hired-by",
        "employer",
        "employer",
        build.employer,
        'Being hired by a firm: "I got poached by Google".',
        r"^(?:got|was|been)\s+(?:poached|hired|headhunted|recruited|snapped up)"
        r"\s+by\s+(?P<v>.+)",
    ),
    _rule(
        "employer-first-week",
        "employer",
        "employer",
        build.employer,
        'A first week at a named firm: "just finished my first week at Shopify".',
        r"^(?:just\s+)?(?:finished|started|survived|did|had|completed|on)\s+my\s+"
        r"(?:first|second|third)\s+(?:day|week|month)\s+at\s+(?P<v>(?-i:[A-Z])[\w&'.-]+"
        r"(?:\s+(?-i:[A-Z])[\w&'.-]+)*)",
    ),
    _rule(
        "employer-offer",
        "employer",
        "employer",
        build.employer,
        'An offer accepted from a firm: "I accepted an offer from Deloitte".',
        r"^(?:accepted|took|got|signed)\s+(?:an?\s+|the\s+)?(?:job\s+)?offer\s+(?:from|at|with)\s+"
        r"(?P<v>[\w&'.-]+(?:\s+(?-i:[A-Z])[\w&'.-]+)*)",
    ),
    _rule(
        "employer-jumped-ship",
        "employer",
        "employer",
        build.employer,
        'A move to a named firm: "jumped ship to KPMG".',
        r"^jumped\s+ship\s+to\s+(?P<v>(?-i:[A-Z])[\w&'.-]+(?:\s+(?-i:[A-Z])[\w&'.-]+)*)\s*$",
    ),
    _rule(
        "liking-obsessed",
        "come-around",
        "opinion",
        build.come_around,
        'A thing one is hooked on is liked: "I\'m obsessed with pickleball".',
        r"^(?:am|is)\s+(?:so\s+|totally\s+)?(?:obsessed with|hooked on|into)\s+(?P<v>.+)",
    ),
    _rule(
        "switched-to",
        "switched-to",
        "habit",
        build.switched_to,
        'A habit switched to: "I switched to oat milk".',
        r"^switched\s+to\s+(?P<v>(?!an?\b|the\b)[\w -]+)",
    ),
    _rule(
        "job-started-as",
        "job",
        "job",
        build.job,
        'A job started: "I started as a junior designer".',
        r"^(?:started|starting|start|began)\s+as\s+(?:an?\s+)?(?P<v>.+)",
    ),
    _rule(
        "employer-got-the-job",
        "employer",
        "employer",
        build.employer,
        'A job got at a named firm: "got the Google job".',
        r"^got\s+(?:the|a|my)\s+(?P<v>(?-i:[A-Z])[\w&'-]+(?:\s+(?-i:[A-Z])[\w&'-]+)*)\s+"
        r"(?:job|offer|position|role)\b",
    ),
    _rule(
        "plan-heading-to",
        "plan-to",
        "plan",
        build.plan_to,
        'A trip under way or planned: "flying to Tokyo tomorrow".',
        r"^(?:flying|heading|going|travell?ing|driving|moving)\s+(?:back\s+)?to\s+(?P<v>.+)",
    ),
    _rule(
        "quit",
        "quit",
        "job",
        build.quit,
        'A job, employer or activity left ends what it names: "I quit my job as a barista".',
        r"^(?:quit|left|lost|stopped|gave up|resigned from|was fired from"
        r"|got fired from|got laid off from|retired from)\s+(?:my\s+job\s+(?:as"
        r"|at)\s+(?:an?\s+)?|working\s+(?:as|at|for)\s+(?:an?\s+)?"
        r"|being\s+an?\s+|(?:my|his|her|their)\s+)?(?P<v>.+)",
    ),
    _rule(
        "no-longer",
        "no-longer",
        "any",
        build.no_longer,
        'What one no longer is ends the facts that speak of it: "I\'m no longer a teacher".',
        r"^(?:am|is|are)\s+(?:no\s+longer|not)\s+(?:an?\s+)(?P<v>.+?)(?:\s+(?:anymore"
        r"|any more|any longer))?$",
    ),
    _rule(
        "marital-is",
        "marital",
        "marital",
        build.marital,
        'A marital status, or its negation: "I\'m married to Sam".',
        rf"^{_BE}(?P<neg>not\s+)?(?P<v>{MARITAL})\b(?:\s+to\s+{NAME})?",
    ),
    _rule(
        "marital-got-to",
        "marital",
        "marital",
        build.marital,
        'A marital status reached: "got married to Sam".',
        r"^(?:got|just got|recently got)\s+(?P<v>married|engaged"
        rf"|divorced|separated)\b(?:\s+to\s+{NAME})?",
    ),
    _rule(
        "pet",
        "pet",
        "pet",
        build.pet,
        'A pet had, with its names when given: "I have two cats, Miso and Tofu".',
        r"^(?:have|has|got|adopted|just got|bought)\s+(?:an?"
        r"|one|two|three|four|\d+|a\s+new|another)\s+(?:new\s+"
        rf"|little\s+|pet\s+|rescue\s+|\w+\s+)?(?P<species>{PETS})\b(?:\s*,?\s*(?:named"
        rf"|called)?\s*(?P<names>{NAMES}))?",
    ),
    _rule(
        "family",
        "family",
        "family",
        build.family,
        'Family members had, with a name when given: "I have two sisters".',
        r"^(?:have|has)\s+(?:an?|one|two|three|four|\d+|no)\s+(?:older\s+"
        r"|younger\s+|little\s+|big\s+|twin\s+)?(?P<rel>sisters?"
        r"|brothers?|sons?|daughters?|kids|children|child|siblings"
        rf"|grandchildren)\b(?:\s*,?\s*(?:named|called)\s+{NAME})?",
    ),
    _rule(
        "condition-do-not-have",
        "condition",
        "condition",
        build.condition,
        'A condition no longer had: "I don\'t have asthma anymore".',
        r"^(?:do\s+|does\s+)?(?P<neg>not\s+|no\s+longer\s+)(?:have"
        rf"|has|suffer from|suffers from)\s+(?P<v>{TYPED_CONDITION})",
    ),
    _rule(
        "condition-have",
        "condition",
        "condition",
        build.condition,
        'A condition had or diagnosed: "I have asthma", "diagnosed with celiac".',
        r"^(?:(?:have|has|get|gets|suffer from|suffers from)\s+(?P<v>" + TYPED_CONDITION + r")"
        r"|(?:was|were|got|have been|has been|just got|just been)\s+diagnosed\s+with\s+"
        r"(?P<v2>[\w' -]{3,40}))",
    ),
    _rule(
        "condition-adjective",
        "condition-adj",
        "condition",
        build.condition_adj,
        'A condition said as an adjective, or its negation: "I\'m diabetic".',
        rf"^{_BE}{_NEG}(?P<v>diabetic|asthmatic|epileptic|pregnant"
        r"|anemic|anaemic|celiac|coeliac|lactose intolerant)\b",
    ),
    _rule(
        "medication-do-not-take",
        "medication",
        "medication",
        build.medication,
        'A drug no longer taken: "I\'m not on statins anymore".',
        r"^(?:do\s+|does\s+)?(?P<neg>not\s+|no\s+longer\s+)(?:take"
        r"|takes|am taking|is taking|am on|is on)\s+(?P<v>[\w-]+(?:\s+[\w-]+)?)"
        r"(?:\s+(?:medication"
        r"|meds|pills|tablets)|$)",
    ),
    _rule(
        "medication-for",
        "medication-for",
        "medication",
        build.medication_for,
        'A drug taken for a condition, and the condition: "metformin for my diabetes".',
        r"^(?:take|takes|am taking|is taking|am on|is on)\s+(?P<v>[\w-]+)\s+for\s+"
        r"(?:my\s+)?"
        rf"(?P<cond>{TYPED_CONDITION})",
    ),
    _rule(
        "medication-take",
        "medication",
        "medication",
        build.medication,
        'A drug taken on a schedule: "I take lisinopril every morning".',
        r"^(?:take|takes|am taking|is taking|started taking)"
        r"\s+(?P<v>[\w-]+(?:\s+[\w-]+)?)(?:\s+(?:every|each|twice|once|in the|at night"
        r"|medication"
        r"|meds|pills|tablets|daily|every day|for)|$)",
    ),
    _rule(
        "opinion",
        "opinion",
        "opinion",
        build.opinion,
        'A liking or a dislike, or its negation: "I love jazz", "I can\'t stand cilantro".',
        r"^(?:do\s+|does\s+|would\s+)?(?P<neg>not\s+|no\s+longer\s+)?(?:really\s+"
        r"|absolutely\s+|totally\s+|also\s+|still\s+)?(?P<verb>love"
        r"|loves|like|likes|enjoy|enjoys|prefer|prefers|adore"
        r"|adores|hate|hates|dislike|dislikes|cannot stand|can not stand"
        r"|am into|is into|am a (?:big |huge )?fan of|is a (?:big "
        r"|huge )?fan of)\s+(?P<v>.+)",
    ),
    _rule(
        "plan-going-to",
        "plan",
        "plan",
        build.plan,
        'A plan one is going to carry out, or no longer is: "I\'m planning to run a marathon".',
        r"^(?:am|is|are)\s+(?P<neg>not\s+)?(?:going|planning"
        r"|hoping|about|scheduled|set)\s+to\s+(?P<v>.+)",
    ),
    _rule(
        "plan-will",
        "plan",
        "plan",
        build.plan,
        'A plan one will or wants to carry out: "I want to learn Italian".',
        r"^(?:will|plan to|plans to|intend to|intends to|want to"
        r"|wants to|would like to|hope to|hopes to|am going to"
        r"|is going to|have to|need to)\s+(?P<v>.+)",
    ),
    _rule(
        "plan-progressive",
        "plan-progressive",
        "plan",
        build.plan_progressive,
        'A trip or an event in progress or coming up: "I\'m flying to Oslo on Friday".',
        r"^(?:am|is|are)\s+(?:flying|travell?ing|heading|driving"
        r"|moving|visiting|leaving|starting|attending|getting married|having)\b(?P<v>.*)",
    ),
    _rule(
        "cancel",
        "cancel",
        "plan",
        build.cancel,
        'A plan cancelled ends: "I cancelled my trip to Rome".',
        r"^(?:cancell?ed|called off|postponed)\s+(?:my\s+|our\s+|the\s+)?(?P<v>.+)",
    ),
    _rule(
        "diet-eating-again",
        "diet-eat",
        "diet",
        build.diet_eat,
        'A food group eaten again: "I started eating fish again".',
        rf"^(?:have\s+|has\s+)?(?:gone back to|went back to|started|start|am|is|began)"
        rf"\s+eating\s+(?P<v>(?:{FOOD_GROUPS})\b)",
    ),
    _rule(
        "diet-eat-again",
        "diet-eat",
        "diet",
        build.diet_eat,
        'A food group eaten again: "I eat meat again".',
        rf"^(?:eat|eats)\s+(?P<v>(?:{FOOD_GROUPS})\b)\s+again",
    ),
    _rule(
        "diet-eat",
        "diet-eat",
        "diet",
        build.diet_eat,
        'A diet eaten: "I eat vegan".',
        rf"^(?:eat|eats)\s+(?P<v>(?:{DIETS})\b)",
    ),
    _rule(
        "liking-come-around",
        "come-around",
        "opinion",
        build.come_around,
        'A thing come around to is liked: "I\'ve come around on olives".',
        r"^(?:have\s+|has\s+)?(?:come|came|coming)\s+around\s+(?:on|to)\s+(?P<v>.+)",
    ),
    _rule(
        "manage",
        "manage",
        "job",
        build.manage,
        'A business one runs or owns: "I run a small bakery".',
        r"^(?:manage|manages|run|runs|own|owns|opened)\s+(?P<v>(?:a|an|the|my)\s+.+)",
    ),
    _rule(
        "employer-starting-at",
        "employer",
        "employer",
        build.employer,
        'A job starting at a named firm: "starting at Google in May".',
        r"^(?:starting|start|started|will start|am starting|starts)"
        r"\s+(?:a\s+new\s+job\s+)?at\s+"
        r"(?P<v>(?-i:[A-Z]).+)",
    ),
    _rule(
        "admitted",
        "admitted",
        "event",
        build.admitted,
        'A place one got into: "I got into Edinburgh".',
        r"^(?:got into|got accepted (?:in)?to|was accepted (?:in)?to"
        r"|were accepted (?:in)?to"
        r"|got admitted to|was admitted to|got a place (?:at|on))\s+(?P<v>.+)",
    ),
    _rule(
        "event",
        "event",
        "event",
        build.event,
        'Something done or that happened: "I ran the Berlin marathon".',
        r"^(?:went|travell?ed|flew|visited|attended|graduated"
        r"|finished|completed|ran|won|got back|came back|returned"
        r"|started|bought|sold|met|had|adopted|celebrated|took)\b(?P<v>.*)",
    ),
    _rule(
        "language",
        "language",
        "language",
        build.language,
        'A language spoken: "I speak Portuguese".',
        r"^(?:speak|speaks)\s+(?P<v>.+)",
    ),
    _rule(
        "study",
        "study",
        "study",
        build.study,
        'A subject studied: "I study law".',
        r"^(?:study|studies|am studying|is studying|majored in|major in)\s+(?P<v>.+)",
    ),
    _rule(
        "hobby",
        "hobby",
        "hobby",
        build.hobby,
        'A game or an instrument played: "I play the cello".',
        r"^(?:play|plays)\s+(?P<v>.+)",
    ),
    _rule(
        "age-years-old",
        "age",
        "age",
        build.age,
        'An age: "I\'m 34".',
        r"^(?:am|is|are)\s+(?P<v>\d{1,3})(?:\s+years?\s+old)?\s*$",
    ),
    _rule(
        "activity",
        "activity",
        "activity",
        build.activity,
        'Something one is doing: "I\'m learning to knit".',
        r"^(?:am|is|are)\s+(?P<v>(?!going\b|dying\b)[a-z]+ing\b.+)",
    ),
    _rule(
        "age-just-turned",
        "age",
        "age",
        build.age,
        'An age just reached: "just turned 30".',
        r"^(?:just\s+)?turned\s+(?P<v>\d{1,3})\b",
    ),
    _rule(
        "name-bare",
        "name-bare",
        "name",
        build.name_bare,
        'A capitalised name after "I\'m": "Hi, I\'m Priya".',
        r"^(?:am|is)\s+(?P<v>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+){0,2})"
        r"\s*(?:$|,|!|\.|\s+(?:and|btw|here|by the way|nice|from|if)\b)",
    ),
    _rule(
        "identity",
        "identity",
        "job",
        build.identity,
        "What one is: a job when its head noun is an occupation, else a plain fact.",
        r"^(?:am|is|are|have been|has been)\s+(?:now\s+)?(?P<neg>not\s+)?(?:an?\s+)"
        r"(?P<v>[\w &'-]{2,60})",
    ),
)
