"""A small English suffix stripper, so "hiking", "hiked" and "hikes" share one stem.

Deliberately light (plurals, -ing, -ed, -tion, final e and y): it only has to
map inflections of one word together, never to produce a dictionary word. It is
pure Python with no data files, so every install ranks the same way.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiouy")
_NO_UNDOUBLE = frozenset("lsz")


def _has_vowel(text: str) -> bool:
    return any(char in _VOWELS for char in text)


def _undouble(stem: str) -> str:
    """``runn`` -> ``run``: the doubled consonant an -ing or -ed added."""
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS | _NO_UNDOUBLE:
        return stem[:-1]
    return stem


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The stem of one lowercase word; words of three letters or fewer, and numbers, stay."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "i"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if _has_vowel(base):
                word = _undouble(base)
            break
    if word.endswith("tion") and len(word) > 6:
        word = word[:-3]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if word.endswith("y") and len(word) > 3 and word[-2] not in _VOWELS:
        word = word[:-1] + "i"
    return word
