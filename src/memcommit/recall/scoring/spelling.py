"""Query words the store has never seen, mapped to words it has: normalization for real chat.

People type "sooo", "resturant" and "Anyting". The tokenizer already lowercases
and drops emoji and punctuation; what is left is a query term no memory of the
tenant contains, which would match nothing. Such a term is replaced by the
tenant's own word it most likely meant, tried in this order:

1. its elongations collapsed ("sooo" -> "soo" -> "so", "yesss" -> "yes");
2. a word at edit distance 1 (one letter deleted, inserted, replaced, or two
   swapped) that at least ``MIN_DF`` of the tenant's memories contain (a
   misspelling is rare; the word it misspells is not), the most frequent first.

Only terms of ``MIN_LENGTH`` letters or more are corrected (short words have
too many neighbours), and never the calendar's words, which the date reader
understands ("june" is not a misspelled "tune"). The vocabulary is the tenant's own (its document
frequencies), so another tenant's words never correct this tenant's query.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.scoring.when import CALENDAR_WORDS

MIN_LENGTH = 5
MIN_DF = 2
_RUN = re.compile(r"(\w)\1{2,}")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _df(index: TenantIndex, term: str) -> int:
    """How many of the tenant's memories contain ``term`` or a word with its stem."""
    vocabulary = index.vocabulary
    return sum(index.doc_frequency(tid) for tid in vocabulary.variants(term))


def _collapsed(term: str) -> Iterator[str]:
    """``term`` with every run of 3+ equal letters cut to two, then to one."""
    if _RUN.search(term):
        yield _RUN.sub(r"\1\1", term)
        yield _RUN.sub(r"\1", term)


@lru_cache(maxsize=4096)
def _edits(term: str) -> frozenset[str]:
    """Every string at edit distance 1 from ``term`` (Damerau: swaps of neighbours count 1)."""
    splits = [(term[:i], term[i:]) for i in range(len(term) + 1)]
    alphabet = sorted(set(_LETTERS) | set(term))
    out = {left + right[1:] for left, right in splits if right}
    out |= {left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1}
    out |= {left + c + right[1:] for left, right in splits if right for c in alphabet}
    out |= {left + c + right for left, right in splits for c in alphabet}
    out.discard(term)
    return frozenset(out)


def correction(index: TenantIndex, term: str) -> str | None:
    """The tenant's word ``term`` most likely meant, or None (known, too short, or no candidate)."""
    if len(term) < MIN_LENGTH or not term.isalpha() or term in CALENDAR_WORDS:
        return None
    if _df(index, term):
        return None
    for collapsed in _collapsed(term):
        if _df(index, collapsed):
            return collapsed
    best: tuple[int, str] | None = None
    for candidate in index.vocabulary.among(_edits(term)):
        frequency = _df(index, candidate)
        if frequency >= MIN_DF and (best is None or (-frequency, candidate) < best):
            best = (-frequency, candidate)
    return best[1] if best else None


def normalized(index: TenantIndex, terms: Counter[str]) -> Counter[str]:
    """``terms`` with every unknown term replaced by its correction (counts add up)."""
    out: Counter[str] = Counter()
    for term in sorted(terms):
        out[correction(index, term) or term] += terms[term]
    return out
