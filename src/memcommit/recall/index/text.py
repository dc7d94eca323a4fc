"""Tokenization for lexical ranking: lowercase words minus a fixed stop-word list; who spoke.

The list is fixed (not learned from the corpus) so a memory's terms never depend
on what else is stored: one tenant's writes cannot change another's terms. A
memory's speaker (`speaker_of`) is read with its terms, when it is indexed.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from memcommit.model import Memory

_WORD = re.compile(r"[^\W_]+")

#: Function words that carry no topic. Fixed: changing it changes every score.
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
    ]
)


def words(text: str) -> list[str]:
    """Lowercased letter-and-digit runs of ``text``, in order (stop words kept)."""
    return _WORD.findall(text.lower())


def tokenize(text: str) -> list[str]:
    """The terms of ``text``: lowercased words that are not stop words, in order."""
    return [word for word in _WORD.findall(text.lower()) if word not in STOP_WORDS]


#: ASCII text's `_WORD` runs, bytewise: letters and digits kept, NUL kept, all else a space.
_ASCII_RUNS = bytes(c if c == 0 or (c < 128 and chr(c).isalnum()) else 32 for c in range(256))


def tokenize_many(texts: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The terms of many texts at once: (distinct terms, each term's text, its place).

    Term ``k`` of all the texts in order is ``distinct[place[k]]``, of text
    ``text[k]``: what `tokenize` gives for each text, without a call per text.
    Texts of ASCII are joined (by NUL, which no word holds) and split bytewise,
    which is what `_WORD` does to ASCII; any other text is tokenized one by one.
    """
    joined = "\x00".join(texts)
    if joined.isascii() and joined.count("\x00") == len(texts) - 1:
        runs = joined.lower().encode("ascii").translate(_ASCII_RUNS)
        found = runs.replace(b"\x00", b" \x00 ").decode("ascii").split()
        marks = np.zeros(0, dtype=np.int64)
        split = True
    else:
        per_text = [tokenize(text) for text in texts]
        found = list(itertools.chain.from_iterable(per_text))
        marks = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
        split = False
    distinct = list(dict.fromkeys(found))
    place = dict(zip(distinct, range(len(distinct)), strict=True))
    local = np.fromiter(map(place.__getitem__, found), dtype=np.int64, count=len(found))
    if not split:
        return distinct, np.repeat(np.arange(len(texts), dtype=np.int64), marks), local
    dropped = np.fromiter((w in STOP_WORDS or w == "\x00" for w in distinct), dtype=np.bool_)
    text_of = np.cumsum(local == place.get("\x00", -1))
    kept = ~dropped[local]
    terms = [w for w, drop in zip(distinct, dropped.tolist(), strict=True) if not drop]
    renumber = np.cumsum(~dropped) - 1
    return terms, text_of[kept], renumber[local[kept]]


def term_counts(text: str) -> Counter[str]:
    """How often each term occurs in ``text``."""
    return Counter(tokenize(text))


_PREFIX = re.compile(r"^\s*([^\W\d_][\w'.-]*(?: [^\W\d_][\w'.-]*){0,2})\s*:\s")


def speaker_of(memory: Memory) -> str | None:
    """The lowercased speaker of ``memory``: ``metadata["speaker"]``, else its "Name:" prefix."""
    named = memory.metadata.get("speaker") if memory.metadata else None
    if isinstance(named, str) and named.strip():
        return " ".join(named.lower().split())
    text = memory.content or ""
    found = _PREFIX.match(text) if ":" in text else None  # (no colon: no prefix, no match tried)
    return " ".join(found.group(1).lower().split()) if found else None
