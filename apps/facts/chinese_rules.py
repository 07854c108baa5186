"""The Chinese rule tables (pure: no Django, no database): ZH_REPLIES, clauses that answer or
correct the one before ("不是X", "而是Y", "X去不成了"), read first; and ZH_RULES, what a
clause says of whom it is about once its subject is known ("[我]对花生过敏"). Each rule's
builder is in `chinese_builders`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from apps.facts import chinese_builders as build
from apps.facts.chinese_builders import Said
from apps.facts.chinese_words import ZH_PETS
from apps.facts.grammar import ClauseState, Fact, Who
from apps.facts.table import Rule, first_facts


def zh_reply(clause: str, carry: ClauseState) -> list[Fact] | None:
    """The facts of the first reply rule (ZH_REPLIES) that gives any; None when none does."""
    return first_facts(ZH_REPLIES, clause, Said(Who("用户", ""), carry, False))


def zh_facts(clause: str, who: Who, carry: ClauseState, correction: bool) -> list[Fact]:
    """The facts of the first rule (ZH_RULES) that gives any for `clause`, said of `who`."""
    return first_facts(ZH_RULES, clause, Said(who, carry, correction)) or []


def _rule(
    name: str,
    slot: str,
    builder: Callable[[re.Match[str], Said], list[Fact] | None],
    note: str,
    pattern: str | re.Pattern[str],
    *,
    anywhere: bool = False,
) -> Rule[Said]:
    return Rule(name, re.compile(pattern), slot, builder, "zh", note, anywhere)


# "(从)成都搬到了昆明": a move from a known place.
_ZH_MOVED_FROM = re.compile(
    r"^(?P<old>[^，,。住]{2,6}?)(?:搬到了|搬到|搬去了|搬去)(?P<v>[^，,。]+?)(?:了|住)?$"
)
# Where one studies or is, in a known place ("在南京读研", "现在还在长沙"):
# `vocabulary.zh_place_named` decides what a place is ("在公司" names none).
_ZH_IN_PLACE = re.compile(
    r"^(?:现在)?(?:还|仍然|依然|一直)?在(?P<place>[\u4e00-\u9fff]{2,5}?)"
    r"(?:(?P<study>读研|读博|读书|上学|上大学|读大学|念书)|(?:呢|啊|呀)?$)"
)
# A drug's name by its ending ("二甲双胍", "氨氯地平", "布洛芬片").
_ZH_DRUG = r"[\u4e00-\u9fff]{2,8}?(?:平|坦|林|素|酮|胺|醇|尔|利|汀|胍|片|胶囊|药|乐|唑|星|宁|韦)"
_ZH_PET_COUNT = "(?:一只|一条|只|条)"

# In order: the first rule whose pattern matches and whose builder gives facts wins.
ZH_RULES: tuple[Rule[Said], ...] = (
    _rule(
        "zh-diet-doing",
        "diet",
        build.diet_doing,
        "A diet kept to: 在生酮, 在减肥.",
        r"^在(?P<v>生酮|节食|减肥|戒糖|断食|控糖)",
    ),
    _rule(
        "zh-stopped",
        "any",
        build.ends_value,
        "Something stopped ends the facts that speak of it: 把咖啡停了.",
        r"^(?:把|将)?(?P<v>[^我你把将，,。]{1,6}?)停(?:掉)?了$",
    ),
    _rule(
        "zh-pet-called",
        "pet",
        build.pet_with_name,
        "A pet and its name: 家狗叫豆豆.",
        rf"^(?:家)?(?P<species>{ZH_PETS})(?:叫|名叫)(?P<name>[^，,。]{{1,6}})$",
    ),
    _rule(
        "zh-only-drinks",
        "opinion",
        build.only_drinks,
        "What one only drinks now is liked: 现在只喝美式了.",
        r"^(?:现在)?(?:只|都|就)喝(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-condition-alone",
        "condition",
        build.condition_alone,
        "A known condition said on its own: 体检说我贫血.",
        r"^(?P<v>(?![有得患没])[^，,。]{1,6}?)$",
    ),
    _rule(
        "zh-is-not",
        "correction",
        build.replaced,
        "A value corrected in place: 是杭州不是苏州.",
        r"^是(?P<new>[^，,。不]{1,8})(?:而)?不是(?P<old>[^，,。]{1,8})$",
    ),
    _rule(
        "zh-medicine-is",
        "medication",
        build.medicine_is,
        "The drug taken now, instead of the ones before: 吃的药换成了氨氯地平.",
        r"^吃的(?:药)?(?:是|换成了?)(?P<v>[^，,。]{2,8})$",
    ),
    _rule(
        "zh-preparing-exam",
        "study",
        build.preparing_exam,
        "An exam prepared for: 在家全职备考研究生.",
        r"^(?:在家)?(?:全职)?(?:备考|考)(?P<v>[^，,。]{2,8})$",
    ),
    _rule(
        "zh-lives-short",
        "home",
        build.lives_in_ending_plan,
        "Where one lives, which a planned move there ends: 住在杭州了.",
        r"^(?:开始)?住(?:在)?(?P<v>[^，,。了]{2,6})(?:了)?$",
    ),
    _rule(
        "zh-no-longer-is",
        "any",
        build.no_longer_is,
        "What one no longer is ends the facts that speak of it: 已经不是老师了.",
        r"^(?:现在)?(?:不再是|不是|已经不是)(?P<v>[^，,。]{1,6}?)了$",
    ),
    _rule(
        "zh-vegan",
        "diet",
        build.vegan,
        "A vegetarian or vegan diet said as what one is: 是纯素的.",
        r"^(?:是)?(?P<v>纯素|吃素|素食者|素食主义者)(?:的)?$",
    ),
    _rule(
        "zh-medication-switched",
        "medication",
        build.medication_switched,
        "After a doctor or a drug was mentioned, a switch is to a new drug: 给我换成了阿托伐他汀.",
        r"^(?:给我|帮我)?(?:换成|改成|换了|改用|改吃)(?:了)?(?P<new>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-pet-adopted",
        "pet",
        build.pet_got,
        "A pet adopted or bought, its name perhaps in the next clause: 领养了一只猫.",
        rf"^(?:又)?(?:捡了|领养了|收养了|买了|养了){_ZH_PET_COUNT}(?P<species>{ZH_PETS})$",
    ),
    _rule(
        "zh-left-employer",
        "employer",
        build.left_employer,
        "Leaving a place of work ends the employer and the job: 从腾讯离职了.",
        r"^从(?P<v>[^，,。]+?)(?:离职|辞职|退休)了?",
    ),
    _rule(
        "zh-allergen-is",
        "allergy",
        build.allergic,
        "The allergen named as such: 过敏源其实是花生.",
        r"^(?:过敏的|过敏源)(?:其实)?是(?P<v>[^，,。]+?)$",
    ),
    _rule(
        "zh-not-allergic",
        "allergy",
        build.not_allergic,
        "An allergy denied: 不是芒果过敏.",
        r"^(?:不是|没有|并不是)(?P<v>[^对，,。]{1,6}?)过敏$",
    ),
    _rule(
        "zh-allergic-short",
        "allergy",
        build.allergic,
        "An allergy said short: 花生过敏.",
        r"^(?:是)?(?P<v>[^对不，,。是]{1,6}?)过敏$",
    ),
    _rule(
        "zh-not-that-one",
        "allergy",
        build.not_that_one,
        "After an allergy, the one it is not ends: 过敏的是花生，不是芒果.",
        r"^(?:不是|而不是)(?P<v>[^，,。]{1,6})$",
    ),
    _rule(
        "zh-medication-taken",
        "medication",
        build.medication_taken,
        "A drug taken, by its name's ending, and what for: 每天吃二甲双胍控制血糖.",
        rf"^(?:一直|每天|长期|还在|正在)?(?:在)?(?:吃|服用|服)(?P<v>{_ZH_DRUG})"
        r"(?:来)?(?:(?:控制|治疗|降|调理|稳定|预防)[\u4e00-\u9fff]{1,6})?$",
    ),
    _rule(
        "zh-diagnosed",
        "condition",
        build.diagnosed,
        "A condition found or diagnosed: 体检查出了高血压.",
        r"^(?:体检)?(?:查出|检查出|确诊|诊断出|查出来)(?:了|有)?(?P<v>[^，,。]+?)$",
    ),
    _rule(
        "zh-nickname",
        "nickname",
        build.nickname,
        "What others call one: 朋友都叫我小雨.",
        r"^(?:朋友|大家|别人|他们|家里人)(?:都)?(?:叫|喊)我(?P<v>[^，,。]{1,4})$",
    ),
    _rule(
        "zh-moved-back",
        "home",
        build.lives_in,
        "A move back home: 搬回老家成都了.",
        r"^搬回(?:了)?(?:老家)?(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-pet-given",
        "pet",
        build.pet_got,
        "A pet given to one, its name perhaps in the next clause: 朋友送了我一只猫.",
        rf"^(?:朋友|别人|家里)?送了我{_ZH_PET_COUNT}(?P<species>{ZH_PETS})$",
    ),
    _rule(
        "zh-medication-stopped",
        "medication",
        build.medication_stopped,
        "A drug stopped; a following 换成 names the new one: 停了阿司匹林.",
        r"^(?:停了|停用了|不吃了|不再吃|停掉了)(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-replaced-by",
        "correction",
        build.replaced_by,
        "The new value of one a clause before stopped or denied: 换成了布洛芬.",
        r"^(?:换成|改成|换了|改用|改吃)(?:了)?(?P<new>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-employer-joined",
        "employer",
        build.works_at,
        "A new employer joined: 跳槽到字节了.",
        r"^(?:跳槽到|跳槽去|跳到|入职|加入)(?:了)?(?P<v>[^，,。]+?)(?:工作|上班)?了?$",
    ),
    _rule(
        "zh-job-at",
        "job",
        build.job_at,
        "A job at a place: 在医院当护士.",
        r"^在(?P<org>(?!家|宿舍|厨房|路上|外面|这|那)[^，,。]{1,12}?)(?:做|当|开)"
        r"(?P<job>[^，,。]{1,10}?)(?:的)?$",
    ),
    _rule(
        "zh-opened-shop",
        "job",
        build.opened_shop,
        "A business one opened: 自己开了一家咖啡店.",
        r"^(?:自己)?开了(?:一)?(?:家|个|间)(?P<v>[^，,。]+?)$",
    ),
    _rule(
        "zh-gave-up",
        "any",
        build.gave_up,
        "A habit given up ends the facts that speak of it: 戒了咖啡.",
        r"^(?:戒了|戒掉了|戒)(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-eats-again",
        "diet",
        build.eats,
        "A food group eaten again: 又开始吃肉了.",
        r"^(?:开始|又开始|重新)吃(?P<v>肉|鱼|海鲜|鸡肉|猪肉|牛肉|羊肉|鸡蛋|蛋|荤)了?$",
    ),
    _rule(
        "zh-pet-named-called",
        "pet",
        build.pet_with_name,
        "A pet with its name before it: 养了一只叫豆豆的柯基.",
        rf"^养了?{_ZH_PET_COUNT}叫(?P<name>[^，,。的]{{1,6}})的(?P<species>{ZH_PETS})$",
    ),
    _rule(
        "zh-switched-food",
        "opinion",
        build.switched_food,
        "A drink or food switched to is liked: 改喝燕麦奶了.",
        r"^(?:改喝|改吃|改成喝|改成吃|开始喝|开始吃)(?:了)?(?P<v>[^，,。]+?)了?$",
    ),
    _rule(
        "zh-pet-started",
        "pet",
        build.pet_got,
        "A pet one started keeping, its name perhaps in the next clause: 开始养猫了.",
        rf"^(?:开始)?养(?:了)?(?:一只|一条|只|条|个)?(?P<species>{ZH_PETS})了?$",
    ),
    _rule(
        "zh-pet-named-later",
        "pet",
        build.pet_named_later,
        "The name of the pet a clause before got: 给它取名叫年糕.",
        r"^(?:我)?(?:给它|给他|给她)?(?:叫|名叫|取名叫?|起名叫?|名字叫)(?P<name>[^，,。]{1,6})$",
    ),
    _rule(
        "zh-name-corrected",
        "name",
        build.name_corrected,
        "After a clause that only said it was wrong, the name meant: 打错了，应该是李娜.",
        r"^(?:应该)?是(?P<v>[\u4e00-\u9fff]{2,3})$",
    ),
    _rule(
        "zh-allergic-to",
        "allergy",
        build.allergic_to,
        "An allergy, or its negation: 对花生过敏, 不对芒果过敏.",
        r"^(?:(?P<neg>不|并不|其实不|没有)对|对)(?P<v>.+?)(?P<neg2>不)?过敏",
    ),
    _rule(
        "zh-allergic-is",
        "allergy",
        build.allergic_is,
        "The allergy after a negated one: 是对虾过敏.",
        r"^(?:是对|是)(?P<v>.+?)过敏",
    ),
    _rule(
        "zh-name",
        "name",
        build.name,
        "One's name: 叫王磊, 名字是李娜.",
        r"^(?:叫|名叫|的名字是|名字叫|名字是|全名叫|全名是|大名叫|本名叫)(?P<v>[^\s，,。]{1,12})",
    ),
    _rule(
        "zh-home",
        "home",
        build.lives_in,
        "Where one lives or moved to: 住在上海, 搬到了杭州.",
        r"^(?:现在|已经)?(?:住在|搬到了|搬到|搬去了|搬去|定居在|生活在)(?P<v>[^，,。]+?)(?:了|住|生活)?$",
    ),
    _rule(
        "zh-home-lived-for",
        "home",
        build.lives_in,
        "Where one has lived (for so long) is where one lives: 在成都住了五年了.",
        r"^(?:一直|现在)?在(?P<v>[^，,。\s]{2,12}?)(?:住了|生活了)[^，,。]{0,8}$",
    ),
    _rule(
        "zh-home-no-longer",
        "home",
        build.home_no_longer,
        "A place one no longer lives in: 不再住在北京了.",
        r"^(?:不再|已经不)(?:住在)(?P<v>.+?)了?$",
    ),
    _rule(
        "zh-job-quit",
        "job",
        build.job_quit,
        "Quitting, losing or retiring from work ends the job and the employer: 辞职了, 退休了.",
        r"^(?:辞职了|辞职|失业了|退休了|被裁员了|离职了)",
    ),
    _rule(
        "zh-job-no-longer",
        "job",
        build.job_no_longer,
        "A job title no longer held ends the job: 不当老师了.",
        r"^(?:不再|不)(?:当|做|是)(?P<v>.+?)了?$",
    ),
    _rule(
        "zh-works-at",
        "employer",
        build.works_at,
        "Where one works: 在腾讯工作.",
        r"^(?:可惜)?(?:现在)?(?:还|仍然|依然|一直)?(?:得|要)?在(?P<v>.+?)(?:工作|上班)",
    ),
    _rule(
        "zh-moved-from",
        "home",
        build.moved_from_a_place,
        "A move from a known place to another: 成都搬到了昆明.",
        _ZH_MOVED_FROM,
    ),
    _rule(
        "zh-in-a-place",
        "home",
        build.in_a_place,
        "Being or studying in a known place: 现在还在长沙, 在南京读研.",
        _ZH_IN_PLACE,
    ),
    _rule(
        "zh-job-is",
        "job",
        build.job_is,
        "A job title one is or took up (or a vegetarian diet): 现在是摄影师.",
        r"^(?:现在)?(?:转行|改行|开始)?(?:是|当|做)(?:了)?(?:一名|一个|一位|名|个)?"
        r"(?P<v>[^，,。]{1,12}?)(?:了|的)?(?:就是.*)?$",
    ),
    _rule(
        "zh-vegetarian",
        "diet",
        build.vegetarian,
        "A vegetarian diet: 现在吃素.",
        r"^(?:现在)?(?:吃素|只吃素|是素食者|是素食主义者)",
    ),
    _rule(
        "zh-does-not-eat",
        "diet",
        build.does_not_eat,
        "A food not eaten: 不吃牛肉了.",
        r"^(?:不再|不|已经不|戒了)吃(?P<v>[^，,。了]+)了?",
    ),
    _rule(
        "zh-pet-with-name",
        "pet",
        build.pet_with_name,
        "A pet had and its name: 养了一只猫，叫咪咪.",
        rf"^(?:养了|养|有)(?:一只|一条|两只|只|条|一个)?(?P<species>{ZH_PETS})[，,]?(?:叫"
        r"|名叫|名字叫)(?P<name>[^\s，,。]+)",
    ),
    _rule(
        "zh-pet-had",
        "pet",
        build.pet_had,
        "A pet had: 养了一只柯基.",
        rf"^(?:养了|养|有)(?:一只|一条|两只|只|条)(?P<species>{ZH_PETS})",
    ),
    _rule(
        "zh-condition-gone",
        "condition",
        build.condition_gone,
        "A condition no longer had: 已经没有哮喘了.",
        r"^(?:没有|不再有|已经没有)(?P<v>.+?)了?$",
    ),
    _rule(
        "zh-condition-had",
        "condition",
        build.condition_had,
        "A known condition had: 有高血压, 得了糖尿病.",
        r"^(?:有|得了|患有|被诊断出)(?P<v>.+)$",
    ),
    _rule(
        "zh-opinion",
        "opinion",
        build.opinion,
        "A liking or a dislike: 喜欢爬山, 讨厌香菜.",
        r"^(?P<neg>不再|不)?(?:越来越|突然|很|非常|特别|也|还挺|还|超|超级|最|真的|好|挺|蛮)?"
        r"(?P<verb>喜欢上了|喜欢上|爱上了|爱上|喜欢|爱|热爱|讨厌|不喜欢)"
        r"(?P<v>[^，,。]+?)(?:了|的)?$",
    ),
    _rule(
        "zh-plan-dropped",
        "plan",
        build.plan_dropped,
        "A plan given up ends: 不去西安了.",
        r"^(?:不去|不打算去|取消了)(?P<v>.+?)了?$",
    ),
    _rule(
        "zh-plan",
        "plan",
        build.plan,
        "A plan: 打算下个月去日本.",
        r"^(?:打算|计划|准备|要|将要|想要|会)(?P<v>.{2,})$",
    ),
    _rule(
        "zh-marital",
        "marital",
        build.marital,
        "A marital status: 结婚了, 单身.",
        r"^(?:是)?(?:已经)?(?P<v>结婚了?|离婚了?|订婚了?|单身|已婚)",
    ),
    _rule(
        "zh-event",
        "event",
        build.event,
        "Something done or that happened: 去了日本, 毕业了.",
        r"^(?:去了|去过|参加了|看了|买了|完成了|毕业了)(?P<v>.*)$",
    ),
)

# In order, before a clause's subject is looked for: the first that gives facts wins.
ZH_REPLIES: tuple[Rule[Said], ...] = (
    _rule(
        "zh-reply-not-but",
        "correction",
        build.replaced,
        "A value corrected by what it is not and what it is: 不是芒果，是菠萝.",
        r"^(?:其实|而)?不是(?P<old>[^，,。]+?)[，,]?(?:而)?是(?P<new>[^，,。]+)$",
    ),
    _rule(
        "zh-reply-not-that-one",
        "allergy",
        build.reply_not_that_one,
        "After an allergy, the one it is not ends: 而不是芒果.",
        r"^(?:而)?不是(?P<v>[^，,。]{1,6})$",
    ),
    _rule(
        "zh-reply-pet-given",
        "pet",
        build.reply_pet_given,
        "A pet given to the user, its name perhaps in the next clause: 家里人送了我一只猫.",
        rf"^(?:朋友|别人|家里人?)?送了我{_ZH_PET_COUNT}(?P<species>{ZH_PETS})$",
    ),
    _rule(
        "zh-reply-call-me",
        "nickname",
        build.reply_nickname,
        "What the user asks to be called: 叫我小雨就行.",
        r"^(?:你)?(?:叫|喊)我(?P<v>[^，,。就吧]{1,4})(?:就行|就好|就可以|吧)?",
    ),
    _rule(
        "zh-reply-renamed",
        "correction",
        build.reply_renamed,
        "A renaming, with the new name or before it: 豆豆改名叫可乐了.",
        r"^(?P<old>[^我你，,。]{1,6}?)改名(?:了|字了)?(?:叫(?P<new>[^，,。]{1,6}))?$",
    ),
    _rule(
        "zh-reply-now-called",
        "correction",
        build.reply_now_called,
        "After a renaming, the new name: 现在它叫可乐.",
        r"^(?:现在)?(?:它|他|她)(?:叫|改叫)(?P<new>[^，,。]{1,6})$",
    ),
    _rule(
        "zh-reply-nickname",
        "nickname",
        build.reply_nickname,
        "What others call the user: 大家都叫我小雨.",
        r"^(?:朋友|大家|别人|他们|家里人)(?:都)?(?:叫|喊)我(?P<v>[^，,。]{1,4})$",
    ),
    _rule(
        "zh-reply-from-to",
        "correction",
        build.replaced,
        "A value changed from one to another, anywhere in the clause: 从拿铁换成了美式.",
        r"从(?P<old>[^，,。从]{1,8}?)(?:换成|改成|换为|改为)(?:了)?(?P<new>[^，,。]{1,8}?)了?$",
        anywhere=True,
    ),
    _rule(
        "zh-reply-fine-to-eat",
        "allergy",
        build.reply_fine_to_eat,
        "A food said to be fine ends an allergy to it: 芒果没问题.",
        r"^(?P<v>[^我你，,。]{1,6}?)(?:没问题|可以吃|我可以吃|吃没事|我吃没事|没事)$",
    ),
    _rule(
        "zh-reply-ba-to",
        "correction",
        build.replaced,
        "A value changed to another, anywhere in the clause: 把布洛芬换成了对乙酰氨基酚.",
        r"把(?P<old>[^，,。]{1,8}?)(?:换成|改成|换为)(?:了)?(?P<new>[^，,。]{1,8}?)了?$",
        anywhere=True,
    ),
    _rule(
        "zh-reply-not",
        "correction",
        build.reply_not,
        "A value denied alone; the next clause says what holds instead: 不是芒果.",
        r"^(?:其实|而)?不是(?P<old>[^，,。]+)$",
    ),
    _rule(
        "zh-reply-but-is",
        "correction",
        build.reply_but_is,
        "After a value denied, what holds instead: 而是菠萝.",
        r"^(?:而|应该)?是(?P<new>[^，,。]+)$",
    ),
    _rule(
        "zh-reply-pet-died",
        "pet",
        build.reply_pet_died,
        "A pet that died is no longer had: 年糕上周走了.",
        r"^(?P<v>[^我你他她它，,。]{1,6}?)(?:走了|去世了|死了|没了|离开了)",
    ),
    _rule(
        "zh-reply-plan-off",
        "plan",
        build.reply_plan_off,
        "A plan given up ends: 西安去不成了.",
        r"^(?P<v>[^我你，,。]{1,8}?)(?:去不成了|去不了了|不去了|取消了)",
    ),
)
