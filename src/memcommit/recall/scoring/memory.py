"""The default scorer: lexical relevance that uses what a memory store knows.

A plain index sees isolated texts; a memory store also knows how words inflect
across its own vocabulary, which memories were said together in one session,
who said each, and when. This scorer uses all of it, deterministically and
without a model. Each step is one named weight (0 turns it off):

1. **Stems from the store's vocabulary** (``stems``). Each query term stands
   for every stored term with the same stem ("hiking" finds "hiked"), with
   BM25 weighting (saturation ``k1``, length normalization ``b``). ``b`` is
   1, full normalization, as TF-IDF's cosine has: an assistant's long reply
   touches many topics, and each of its words says less about what it is about
   than a short message's do (on short turns between people 1 and 0.5 rank
   alike).
2. **Spelling** (``spelling``). A query term no memory of the tenant contains
   is mapped to the tenant's own word it most likely meant
   (`memcommit.recall.scoring.spelling`: "sooo", "resturant").
3. **Neighbouring memories** (``neighbours``). In conversation the answer
   often sits next to the memory that matches the words of the question (a
   question and its reply), or one turn further (after an interjection). A
   memory gains ``neighbours`` times the best BM25 of the memories right
   before and after it in the same session, plus half the best of those two
   turns away, counting the query's `_TOP` best matches.
4. **Session context** (``session``). A memory gains ``session`` times its
   session's share of the best matches' BM25 (against the best session's),
   so a turn in the session that discusses the topic beats a stray match
   elsewhere. A session's total is divided by the square root of its turns:
   a session about the topic wins, not the longest one (a chat's day-long
   sessions of hundreds of messages would otherwise win on size alone).
5. **Speaker** (``speaker``). A question that names a person is mostly
   answered by what that person said: memories said by a speaker the query
   names are multiplied by ``1 + speaker`` (`memcommit.recall.scoring.speakers`).
   In a user/assistant chat a question that names no one is the user's about
   their own conversation, and the user's turns take the factor.
6. **Dates** (``dates``). When the query names a time (a day, a month, a year,
   "last week", "two days ago" resolved at ``now``), memories created in it
   are multiplied by ``1 + dates``, and once more on a named day
   (`memcommit.recall.scoring.when`).

Expansion starts from the `_TOP` best matches only, so a common word costs no
more in a long session than in a short one; the best matches and the final top
are found without summing every posting (`memcommit.recall.scoring.maxscore`).

Relevance is scaled to [0, 1] by the best candidate, then blended with recency
like the seed: ``(1 - w)·relevance + w·2^(-age/half_life)``. A memory that
matches no query stem, and is not next to one that does, is no match. Every
scored memory keeps its parts (`Row.components`): ``bm25``, ``neighbours``
(added), the ``session``, ``speaker`` and ``dates`` factors, the scaled
``relevance``, and ``recency`` when it is blended in.

Tried and left out, measured on LoCoMo (see benchmarks/locomo_eval.py): a
second pass of pseudo-relevance feedback (RM3-style terms of the best first
memories, weighted below the query's own) lowered recall@10 at every weight
tried; favouring the reply after a matching turn over the turn before it, and
favouring memories that mention a time for "when" questions, changed nothing
or lowered it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.index.text import words
from memcommit.recall.scoring import maxscore, params
from memcommit.recall.scoring.bm25 import Bm25Search, StemBm25Search
from memcommit.recall.scoring.components import Components
from memcommit.recall.scoring.cosine import Query
from memcommit.recall.scoring.maxscore import Level
from memcommit.recall.scoring.scorers import Presorted
from memcommit.recall.scoring.speakers import named_speakers, speaker_factor
from memcommit.recall.scoring.spelling import normalized
from memcommit.recall.scoring.when import AskedTimes, asked_times, date_factor

_TOP = 400  # the best matches whose neighbours and sessions are looked at


def bm25(
    index: TenantIndex, terms: dict[str, int], k1: float, b: float, *, stems: bool = True
) -> np.ndarray:
    """Stem-class BM25 of every document: each query term counts all its stored variants.

    ``stems=False`` counts the exact term only (the ablation of stemming).
    """
    return (StemBm25Search if stems else Bm25Search)(index, terms, k1, b).all()


def _session_totals(sessions: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` (>= 0) per session code, with the same bits in any order.

    Each value is rounded to a multiple of one power of two, chosen so that
    every partial sum is an integer below 2**53: a float holds each exactly,
    so no order of addition changes a total, and a total has the same bits
    however the index numbered its documents (the rounding is far below
    any difference a ranking can see).
    """
    if not len(values):
        return np.zeros(0)
    peak = float(values.max()) * len(values)
    if peak <= 0.0:
        return np.zeros(int(sessions.max()) + 1)
    step = 2.0 ** (math.frexp(peak)[1] - 52)
    totals: np.ndarray = np.bincount(sessions, weights=np.round(values / step)) * step
    return totals


def _nearby(
    index: TenantIndex, inside: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The turns around ``inside`` (ascending) and what each gains from them.

    A turn gains the best ``values`` of the turns right before and after it,
    plus half the best of those two turns away. Follows the index's session
    links from ``inside`` only, and keeps arrays as long as what they reach,
    so a long session costs no more than a short one.
    """
    reached: list[tuple[np.ndarray, np.ndarray, bool]] = []  # targets, values, adjacent
    for link in index.session_links():
        once = link[inside]
        found = once >= 0
        targets, lent = once[found], values[found]
        twice = link[targets]
        reach = twice >= 0
        reached += [(targets, lent, True), (twice[reach], lent[reach], False)]
    if not reached:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    targets = np.concatenate([r[0] for r in reached])
    docs, slot = np.unique(targets, return_inverse=True)
    near, far = np.zeros(len(docs)), np.zeros(len(docs))
    start = 0
    for found, lent, adjacent in reached:  # the best value per target, adjacent and two away
        np.maximum.at(near if adjacent else far, slot[start : start + len(found)], lent)
        start += len(found)
    gains: np.ndarray = near + far / 2.0
    return docs, gains


class _Shape:
    """One query's turn from BM25 to relevance: neighbours, sessions, speakers, dates.

    Filled from the query's best matches (`_TOP` of them); `finish` applies it
    to any documents with the same arithmetic, so a document's relevance has
    the same bits whether it was scored alone or with every other.
    """

    def __init__(self, scorer: MemoryScorer, index: TenantIndex, search: Bm25Search) -> None:
        self.scorer, self.index, self.search = scorer, index, search
        self.lent = np.zeros(0, dtype=np.int64)  # documents next to a best match (ascending)
        self.gains = np.zeros(0)  # what each of them gains from its neighbours
        self.totals = np.zeros(0)  # per session code: the BM25 of its best matches
        self.best_session = 0.0
        self.touched = np.zeros(1, dtype=bool)  # by session code: has one of the best matches
        self.named: list[int] = []
        self.asked = AskedTimes()
        self._relevance = maxscore.Memo()

    def finish(self, docs: np.ndarray, base: np.ndarray) -> np.ndarray:
        """The relevance of ``docs`` (ascending) given their BM25."""
        return self.finish_parts(docs, base, parts=False)[0]

    def finish_parts(
        self, docs: np.ndarray, base: np.ndarray, *, parts: bool = True
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """`finish`, and the parts of each relevance (``docs`` must all have one)."""
        scorer, index = self.scorer, self.index
        score = base.copy()
        if len(self.lent):
            at = np.minimum(np.searchsorted(self.lent, docs), len(self.lent) - 1)
            gains = self.lent[at] == docs
            score[gains] = base[gains] + scorer.neighbours * self.gains[at[gains]]
        matched = score.copy() if parts else score  # BM25 plus neighbours, before the factors
        if scorer.session and self.best_session > 0:
            sessions = index.session.data[docs]
            scored = self.touched[sessions]
            share = self.totals[sessions[scored]] / self.best_session
            score[scored] *= 1.0 + scorer.session * share
        found: dict[str, np.ndarray] = {}
        if parts:
            found = {"bm25": base, "neighbours": matched - base, "session": score / matched}
        if not parts and not (self.named or self.asked):  # factors of 1: nothing to apply
            return score, found
        speaker = speaker_factor(index.speaker.data, docs, self.named, scorer.speaker)
        dates = date_factor(index.created.data, docs, self.asked, scorer.dates)
        if parts:
            found.update(speaker=speaker, dates=dates)
        if self.named or self.asked:
            score *= speaker * dates
        return score, found

    def _candidates(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``docs`` and the documents next to a best match, with their relevance (> 0 only)."""
        docs = maxscore.union([docs, self.lent]) if len(self.lent) else docs
        score = self._relevance(docs, self._relevance_of)
        return docs[score > 0.0], score[score > 0.0]

    def _relevance_of(self, docs: np.ndarray) -> np.ndarray:
        return self.finish(docs, self.search.of(docs))

    def everything(self) -> np.ndarray:
        """Every document with a relevance: BM25 matches and neighbours of the best (ascending)."""
        hits = self.search.matched()
        return maxscore.union([hits, self.lent]) if len(self.lent) else hits

    def levels(self) -> list[Callable[[], Level]]:
        """Candidates by level of the BM25 search; a ceiling covers every factor after the sum."""
        scorer = self.scorer
        factor = max(1.0, 1.0 + scorer.session) if self.best_session > 0 else 1.0
        if self.named:
            factor *= max(1.0, 1.0 + scorer.speaker)
        if self.asked:
            factor *= max(1.0, 1.0 + scorer.dates) ** 2

        def everything() -> tuple[np.ndarray, np.ndarray]:
            return self._candidates(self.everything())

        found = self.search.levels(self._candidates, factor)
        found[-1] = lambda: (*everything(), 0.0)
        return found


class MemoryScorer:
    """Stems, spelling, neighbours, sessions, speakers and dates on BM25 (see the module doc).

    It asks recall for nothing: its own BM25 search and the session links are
    read from ``query.index``. Every parameter is checked when it is built: the
    weights are finite numbers >= 0, ``b`` is in [0, 1], the switches are bools.
    """

    name = "memory"

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 1.0,
        stems: bool = True,
        spelling: bool = True,
        neighbours: float = 0.5,
        session: float = 0.5,
        speaker: float = 1.0,
        dates: float = 0.5,
    ) -> None:
        self.k1, self.b = params.weight("k1", k1), params.weight("b", b, most=1.0)
        self.stems, self.spelling = params.flag("stems", stems), params.flag("spelling", spelling)
        self.neighbours = params.weight("neighbours", neighbours)
        self.session = params.weight("session", session)
        self.speaker, self.dates = params.weight("speaker", speaker), params.weight("dates", dates)

    def relevance(self, query: Query) -> np.ndarray:
        """Unscaled relevance of every document of the query's index."""
        return self.relevance_parts(query)[0]

    def relevance_parts(self, query: Query) -> tuple[np.ndarray, Components]:
        """Unscaled relevance of every document, and the parts of each nonzero one."""
        shape = self._shape(query)
        docs = shape.everything()
        score, parts = shape.finish_parts(docs, shape.search.of(docs))
        out = np.zeros(query.index.alive.size)
        out[docs] = score
        return out, Components(docs, parts)

    def _shape(self, query: Query) -> _Shape:
        """What turns a document's BM25 into its relevance to ``query``."""
        index = query.index
        terms = dict(normalized(index, query.terms) if self.spelling else query.terms)  # hook
        search = (StemBm25Search if self.stems else Bm25Search)(index, terms, self.k1, self.b)
        shape = _Shape(self, index, search)
        # ── quality hooks: factors from recall/scoring/speakers.py and recall/scoring/when.py ──
        shape.named = named_speakers(words(query.text), index.speakers) if self.speaker else []
        shape.asked = asked_times(query.text, query.now) if self.dates else AskedTimes()
        if not search.terms or not index.sessions.values:  # no sessions: nothing to expand
            return shape
        top, top_base = maxscore.best(search.levels(lambda d: (d, search.of(d))), _TOP)
        sessions = index.session.data
        inside = top[sessions[top] >= 0]  # the best matches that have a session
        if not len(inside):
            return shape
        values = top_base[sessions[top] >= 0]
        if self.neighbours:
            shape.lent, shape.gains = _nearby(index, inside, values)
        codes = np.unique(sessions[inside])
        totals = _session_totals(sessions[inside], values)
        totals /= np.sqrt(np.maximum(index.session_sizes()[: len(totals)], 1))
        shape.best_session = float(totals[codes].max())
        shape.totals = np.zeros(len(index.sessions.values) + 1)  # -1 reads the last slot
        shape.totals[: len(totals)] = totals
        shape.touched = np.zeros(len(shape.totals), dtype=bool)
        shape.touched[codes] = True
        return shape

    def presort(self, query: Query) -> Presorted:
        """Relevance of the best matches first (`scoring.maxscore`), scaled by the best."""
        shape = self._shape(query)

        def scale(values: np.ndarray, best: float) -> np.ndarray:
            scaled: np.ndarray = values / best
            return scaled

        def scaled_parts(best: float) -> Components:
            if best <= 0.0:
                return Components()
            docs = shape.everything()
            score, parts = shape.finish_parts(docs, shape.search.of(docs))
            parts["relevance"] = score / best
            return Components(docs, parts)

        def relevance_of(docs: np.ndarray) -> np.ndarray:
            return shape.finish(docs, shape.search.of(docs))

        return Presorted(shape.levels(), relevance_of, scale, scaled_parts)

    def score_parts(self, query: Query, docs: np.ndarray) -> tuple[np.ndarray, Components]:
        """`score_docs`, and the parts of every document with a relevance (`Row.components`)."""
        relevance, parts = self.relevance_parts(query)
        mine = relevance[docs]
        best = float(mine.max()) if len(mine) else 0.0
        blended = np.full(len(docs), np.nan)
        if best <= 0.0:
            return blended, Components()
        matched = mine > 0.0  # each matched doc is in parts.docs (ascending)
        parts.values["relevance"] = relevance[parts.docs] / best
        blended[matched] = mine[matched] / best
        w = query.recency_weight
        if w:
            recency = parts.values["recency"] = query.recencies(parts.docs)
            mine_recency = recency[np.searchsorted(parts.docs, docs[matched])]
            blended[matched] = (1.0 - w) * blended[matched] + w * mine_recency
        return blended, parts

    def score_docs(self, query: Query, docs: np.ndarray) -> np.ndarray:
        """Relevance scaled to [0, 1] by the best candidate, blended with recency; NaN: no match."""
        return self.score_parts(query, docs)[0]
