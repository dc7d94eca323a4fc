"""The default scorer: lexical relevance that uses what a memory store knows.

A plain index sees isolated texts; a memory store also knows how words inflect
across its own vocabulary, which memories were said together in one session,
and when each was said. This scorer uses all three, deterministically and
without a model:

1. **Stems from the store's vocabulary.** Each query term stands for every
   stored term with the same stem ("hiking" finds "hiked", "hikes"), with
   BM25 weighting (term saturation ``k1``, length normalization ``b``).
2. **Neighbouring memories.** In conversation the answer often sits next to
   the memory that matches the words of the question (a question and its
   reply). A memory gains ``neighbours`` times the best score of the memories
   right before and after it in the same session (by creation time).
3. **Session context.** A memory gains ``session`` times the share of the
   query's weight that its whole session matches, so a turn in the session
   that discusses the topic beats a stray match elsewhere.
4. **Dates.** When the query names a month or a year, memories created in it
   gain ``dates`` times their score.

Relevance is scaled to [0, 1] by the best candidate, then blended with recency
like the seed: ``(1 - w)·relevance + w·2^(-age/half_life)``. A memory that
matches no query stem, and is not next to one that does, is no match.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from itertools import groupby

import numpy as np

from memcommit.recall.columns import NO_START
from memcommit.recall.index import TenantIndex
from memcommit.recall.rank import Query

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_TOP = 200  # memories whose neighbours and sessions are looked at


def bm25(index: TenantIndex, terms: dict[str, int], k1: float, b: float) -> np.ndarray:
    """Stem-class BM25 of every document: each query term counts all its stored variants."""
    out = np.zeros(index.alive.size, dtype=np.float64)
    n_docs = index.n_docs
    if not n_docs:
        return out
    lengths, average = index.lengths()
    norm = k1 * (1.0 - b + b * lengths / max(average, 1e-9))
    for term in sorted(terms):
        parts = [index.postings(tid) for tid in sorted(index.vocabulary.variants(term))]
        parts = [p for p in parts if len(p[0])]
        if not parts:
            continue
        unique: np.ndarray
        tf: np.ndarray
        if len(parts) == 1:  # one stored variant: postings are already one per document
            unique, tf = parts[0][0], parts[0][1].astype(np.float64)
        else:
            docs = np.concatenate([p[0] for p in parts])
            tfs = np.concatenate([p[1] for p in parts]).astype(np.float64)
            unique, inverse = np.unique(docs, return_inverse=True)
            tf = np.bincount(inverse, weights=tfs)
        df = len(unique)
        weight = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        out[unique] += terms[term] * weight * tf * (k1 + 1.0) / (tf + norm[unique])
    return out


_AMBIGUOUS = frozenset(("may", "march", "jan", "mar", "sep", "oct", "dec"))


def _dates(text: str) -> tuple[set[int], set[int]]:
    """Months and years the query names ("may" or "march" only next to a number)."""
    words = re.findall(r"[a-z]+|\d+", text.lower())
    months = set()
    for position, word in enumerate(words):
        if word not in _MONTHS:
            continue
        near = words[max(0, position - 1) : position] + words[position + 1 : position + 2]
        if word in _AMBIGUOUS and not any(w.isdigit() for w in near):
            continue
        months.add(_MONTHS[word])
    return months, {int(y) for y in _YEAR.findall(text)}


class MemoryScorer:
    """Stems, neighbours, sessions and dates on top of BM25 (see the module docstring)."""

    name = "memory"

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        neighbours: float = 0.5,
        session: float = 0.5,
        dates: float = 0.5,
    ) -> None:
        self.k1, self.b = k1, b
        self.neighbours, self.session, self.dates = neighbours, session, dates

    def relevance(self, query: Query) -> np.ndarray:
        """Unscaled relevance of every document of the query's index."""
        index = query.index
        base = bm25(index, dict(query.terms), self.k1, self.b)
        if not base.any():
            return base
        score = base.copy()
        top = np.flatnonzero(base)
        if len(top) > _TOP:  # the best _TOP, and every memory tied with the last of them
            top = top[base[top] >= np.partition(base[top], len(top) - _TOP)[len(top) - _TOP]]
        session_col = index.session.view()
        codes = sorted(set(index.session.data[top].tolist()) - {-1})
        members = np.flatnonzero(index.alive.view() & np.isin(session_col, codes))
        created, commit, ids = index.created.data, index.commit.data, index.ids
        ordered = sorted(
            members.tolist(),
            key=lambda d: (int(session_col[d]), int(created[d]), int(commit[d]), ids[d]),
        )
        best_session = 0.0
        sessions: list[tuple[np.ndarray, float]] = []
        for _, group in groupby(ordered, key=lambda d: int(session_col[d])):
            docs = np.asarray(list(group), dtype=np.int64)
            total = float(base[docs].sum())
            sessions.append((docs, total))
            best_session = max(best_session, total)
            if self.neighbours and len(docs) > 1:
                values = base[docs]
                before = np.concatenate(([0.0], values[:-1]))
                after = np.concatenate((values[1:], [0.0]))
                score[docs] += self.neighbours * np.maximum(before, after)
        if self.session and best_session > 0:
            for docs, total in sessions:
                score[docs] *= 1.0 + self.session * total / best_session
        months, years = _dates(query.text)
        if self.dates and (months or years):
            hit = np.flatnonzero(score)
            created = index.created.data[hit]
            matched = np.zeros(len(hit), dtype=bool)
            for position, micros in enumerate(created.tolist()):
                if micros == NO_START:
                    continue
                moment = datetime.fromtimestamp(micros / 1e6, tz=timezone.utc)
                month_ok = not months or moment.month in months
                year_ok = not years or moment.year in years
                matched[position] = month_ok and year_ok
            score[hit[matched]] *= 1.0 + self.dates
        return score

    def score_docs(self, query: Query, docs: np.ndarray, cosines: np.ndarray) -> np.ndarray:
        """Relevance scaled to [0, 1] by the best candidate, blended with recency; NaN: no match."""
        relevance = self.relevance(query)[docs]
        best = float(relevance.max()) if len(relevance) else 0.0
        if best <= 0.0:
            return np.full(len(docs), np.nan)
        scaled = relevance / best
        w = query.recency_weight
        blended = scaled if w == 0.0 else (1.0 - w) * scaled + w * query.recencies(docs)
        blended[relevance <= 0.0] = np.nan
        result: np.ndarray = blended
        return result
