"""The Chinese word classes the Chinese rules share: relations, pets, conditions and job
titles (pure: no Django, no database).
"""

from __future__ import annotations

import re

ZH_RELATIONS = (
    "姐姐|妹妹|哥哥|弟弟|妈妈|母亲|爸爸|父亲|老婆|妻子|太太|丈夫|老公|男朋友|女朋友|儿子|女儿"
    "|孩子|朋友|室友|同事|老板|爷爷|奶奶|外公|外婆|父母|叔叔|阿姨"
)
ZH_PETS = (
    "[\u4e00-\u9fff]{0,2}?(?:狗|猫)|鹦鹉|仓鼠|兔子|鱼|乌龟|柯基|泰迪|金毛|哈士奇|拉布拉多|柴犬|边牧"
    "|英短|美短|布偶|暹罗|博美|比熊|萨摩耶"
)
# How a job title ends ("摄影师", "程序员", "护士"): a value that ends so is a job.
ZH_JOB_END = re.compile(
    r"(?:师|员|生|家|工|官|医生|护士|厨师|司机|经理|老板|作家|主管|总监|警察|律师|会计|记者|编辑|店主|学生"
    r"|策划|运营|销售|顾问|主播|编剧|导演|翻译|设计|店长|老师|教授|保安|快递员|骑手|测试|开发|运维|客服"
    r"|妈妈|爸爸|主妇|公务员)$"
)
ZH_CONDITION = re.compile(
    r"(?:糖尿病|哮喘|高血压|低血压|偏头痛|心脏病|关节炎|湿疹|抑郁症|焦虑症|失眠|癌症|痛风|贫血|甲减|甲亢"
    r"|\w{1,4}(?:病|症|炎))"
)
