"""Tokenization for lexical ranking: lowercase words minus a fixed stop-word list; who spoke.

The list is fixed (not learned from the corpus) so a memory's terms never depend
on what else is stored: one tenant's writes cannot change another's terms. A
memory's speaker (`speaker_of`) is read with its terms, when it is indexed.
"""

from __future__ import annotations

import re
from collections import Counter

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


def term_counts(text: str) -> Counter[str]:
    """How often each term occurs in ``text``."""
    return Counter(tokenize(text))


_PREFIX = re.compile(r"^\s*([^\W\d_][\w'.-]*(?: [^\W\d_][\w'.-]*){0,2})\s*:\s")


def speaker_of(memory: Memory) -> str | None:
    """The lowercased speaker of ``memory``: ``metadata["speaker"]``, else its "Name:" prefix."""
    named = memory.metadata.get("speaker") if memory.metadata else None
    if isinstance(named, str) and named.strip():
        return " ".join(named.lower().split())
    found = _PREFIX.match(memory.content or "")
    return " ".join(found.group(1).lower().split()) if found else None
