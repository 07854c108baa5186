"""Near-duplicate thresholds per model, from measured pairs in English and Chinese.

Prints, for the primary model (all-MiniLM-L6-v2) and the multilingual one (USE multilingual
v3), the cosine similarity of pairs that state the same fact (restated, reworded) and of pairs
that state different facts (another value of the same slot, another slot), per language, and
where a threshold separates them. Consolidation and the review queue take their per-model
thresholds from these figures (apps/memories/vector_spaces.py).

    .venv/bin/python bench/duplicate_pairs_bench.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import django

django.setup()

import numpy as np  # noqa: E402

from apps.memories.embeddings import SentenceTransformerProvider  # noqa: E402
from apps.memories.multilingual import UniversalSentenceEncoderProvider  # noqa: E402
from bench.machine import cpu  # noqa: E402

SAME = {
    "en": [
        ("The user lives in Shenzhen.", "The user lives in Shenzhen"),
        ("The user is a programmer.", "The user is a programmer by trade."),
        ("The user is allergic to peanuts.", "The user has a peanut allergy."),
        ("The user's sister is called Anna.", "The user has a sister named Anna."),
        ("The user works at Google.", "The user works for Google."),
        ("The user has a dog named Rex.", "The user's dog is named Rex."),
        ("The user takes metformin.", "The user is taking metformin."),
        ("The user likes jazz.", "The user enjoys jazz music."),
    ],
    "zh": [
        ("用户住在深圳。", "用户住在深圳"),
        ("用户是程序员。", "用户的职业是程序员。"),
        ("用户对花生过敏。", "用户有花生过敏。"),
        ("用户的妹妹叫安娜。", "用户有个妹妹叫安娜。"),
        ("用户在谷歌工作。", "用户就职于谷歌。"),
        ("用户养了一只叫旺财的狗。", "用户的狗叫旺财。"),
        ("用户在服用二甲双胍。", "用户正在吃二甲双胍。"),
        ("用户喜欢爵士乐。", "用户喜爱爵士乐。"),
    ],
}
DIFFERENT = {
    "en": [
        ("The user lives in Shenzhen.", "The user lives in Beijing."),
        ("The user lives in Shenzhen.", "The user is a programmer."),
        ("The user is allergic to peanuts.", "The user is allergic to shellfish."),
        ("The user works at Google.", "The user works at Tencent."),
        ("The user has a dog named Rex.", "The user has a cat named Rex."),
        ("The user takes metformin.", "The user takes insulin."),
        ("The user likes jazz.", "The user likes hiking."),
        ("The user's sister is called Anna.", "The user's brother is called Anna."),
    ],
    "zh": [
        ("用户住在深圳。", "用户住在北京。"),
        ("用户住在深圳。", "用户是程序员。"),
        ("用户对花生过敏。", "用户对海鲜过敏。"),
        ("用户在谷歌工作。", "用户在腾讯工作。"),
        ("用户养了一只叫旺财的狗。", "用户养了一只叫旺财的猫。"),
        ("用户在服用二甲双胍。", "用户在服用胰岛素。"),
        ("用户喜欢爵士乐。", "用户喜欢爬山。"),
        ("用户的妹妹叫安娜。", "用户的哥哥叫安娜。"),
    ],
}


def cosines(provider: object, pairs: list[tuple[str, str]]) -> np.ndarray:
    texts = [text for pair in pairs for text in pair]
    vectors = provider.embed_documents(texts)  # type: ignore[attr-defined]
    return np.einsum("ij,ij->i", vectors[0::2], vectors[1::2])


def main() -> None:
    print(f"CPU: {cpu()}")
    providers = {
        "all-MiniLM-L6-v2": SentenceTransformerProvider(),
        "use-multilingual-v3": UniversalSentenceEncoderProvider(),
    }
    for name, provider in providers.items():
        print(f"\n{name}")
        print(f"{'language':<9}{'same: min':>10}{'median':>8}{'different: max':>16}{'median':>8}")
        for language in ("en", "zh"):
            same = cosines(provider, SAME[language])
            different = cosines(provider, DIFFERENT[language])
            print(
                f"{language:<9}{same.min():>10.3f}{np.median(same):>8.3f}"
                f"{different.max():>16.3f}{np.median(different):>8.3f}"
            )
        for language in ("en", "zh"):
            different = cosines(provider, DIFFERENT[language])
            worst = int(np.argmax(different))
            print(f"  closest different pair ({language}): {different[worst]:.3f}")


if __name__ == "__main__":
    main()
