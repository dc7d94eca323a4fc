"""The default scorer: lexical relevance that uses what a memory store knows.

A plain index sees isolated texts; a memory store also knows how words inflect
across its own vocabulary, which memories were said together in one session,
who said each, and when. This scorer uses all of it, deterministically and
without a model. Each step is one named weight (0 turns it off):

1. **Stems from the store's vocabulary** (``stems``). Each query term stands
   for every stored term with the same stem ("hiking" finds "hiked"), with
   BM25 weighting (saturation ``k1``, length normalization ``b``). ``b`` is
   0.5, below the usual 0.75: in conversation the long turns are where people
   tell things, so length is penalized less.
2. **Spelling** (``spelling``). A query term no memory of the tenant contains
   is mapped to the tenant's own word it most likely meant
   (`memcommit.recall.spelling`: "sooo", "resturant").
3. **Neighbouring memories** (``neighbours``). In conversation the answer
   often sits next to the memory that matches the words of the question (a
   question and its reply), or one turn further (after an interjection). A
   memory gains ``neighbours`` times the best BM25 of the memories right
   before and after it in the same session, plus half the best of those two
   turns away.
4. **Session context** (``session``). A memory gains ``session`` times the
   share of the query's weight that its whole session matches, so a turn in
   the session that discusses the topic beats a stray match elsewhere.
5. **Speaker** (``speaker``). A question that names a person is mostly
   answered by what that person said: memories said by a speaker the query
   names are multiplied by ``1 + speaker`` (`memcommit.recall.speakers`).
6. **Dates** (``dates``). When the query names a time (a day, a month, a year,
   "last week", "two days ago" resolved at ``now``), memories created in it
   are multiplied by ``1 + dates``, and once more on a named day
   (`memcommit.recall.when`).

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

import numpy as np

from memcommit.recall.components import Components
from memcommit.recall.index import TenantIndex
from memcommit.recall.rank import Query
from memcommit.recall.scorers import Presorted
from memcommit.recall.speakers import named_speakers, speaker_factor
from memcommit.recall.spelling import normalized
from memcommit.recall.text import words
from memcommit.recall.when import AskedTimes, asked_times, date_factor

_TOP = 200  # memories whose neighbours and sessions are looked at


def bm25(
    index: TenantIndex, terms: dict[str, int], k1: float, b: float, *, stems: bool = True
) -> np.ndarray:
    """Stem-class BM25 of every document: each query term counts all its stored variants.

    ``stems=False`` counts the exact term only (the ablation of stemming).
    """
    out = np.zeros(index.alive.size, dtype=np.float64)
    n_docs = index.n_docs
    if not n_docs:
        return out
    lengths, average = index.lengths()
    norm = k1 * (1.0 - b + b * lengths / max(average, 1e-9))
    for term in sorted(terms):
        if stems:
            tids = sorted(index.vocabulary.variants(term))
        else:
            tids = [tid] if (tid := index.vocabulary.get(term)) is not None else []
        parts = [index.postings(tid) for tid in tids]
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


def _session_totals(sessions: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` per session code, each summed in ascending order of value.

    The order of a sum is fixed by the values alone, so a total has the same
    bits however the index numbered its documents.
    """
    order = np.lexsort((values, sessions))
    sessions, values = sessions[order], values[order]
    totals = np.zeros(int(sessions.max()) + 1 if len(sessions) else 0)
    if len(sessions):
        firsts = np.flatnonzero(np.concatenate(([True], np.diff(sessions) != 0)))
        totals[sessions[firsts]] = np.add.reduceat(values, firsts)
    return totals


def _nearby(index: TenantIndex, inside: np.ndarray, base: np.ndarray) -> np.ndarray:
    """What the turns around each turn matched: the best adjacent, plus half the best two away.

    Follows the index's session links from the matches only, so a long session
    costs no more than a short one beyond its matches.
    """
    near, far = np.zeros(len(base)), np.zeros(len(base))
    values = base[inside]
    for link in index.session_links():
        once = link[inside]
        found = once >= 0
        np.maximum.at(near, once[found], values[found])
        twice = link[once[found]]
        reach = twice >= 0
        np.maximum.at(far, twice[reach], values[found][reach])
    result: np.ndarray = near + far / 2.0
    return result


class MemoryScorer:
    """Stems, spelling, neighbours, sessions, speakers and dates on BM25 (see the module doc)."""

    name = "memory"

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.5,
        stems: bool = True,
        spelling: bool = True,
        neighbours: float = 0.5,
        session: float = 0.5,
        speaker: float = 1.0,
        dates: float = 0.5,
    ) -> None:
        self.k1, self.b, self.stems, self.spelling = k1, b, stems, spelling
        self.neighbours, self.session = neighbours, session
        self.speaker, self.dates = speaker, dates

    def relevance(self, query: Query) -> np.ndarray:
        """Unscaled relevance of every document of the query's index."""
        return self.relevance_parts(query)[0]

    def relevance_parts(self, query: Query) -> tuple[np.ndarray, Components]:
        """Unscaled relevance of every document, and the parts of each nonzero one."""
        index = query.index
        terms = dict(normalized(index, query.terms) if self.spelling else query.terms)  # hook
        base = bm25(index, terms, self.k1, self.b, stems=self.stems)
        if not base.any():
            return base, Components()
        score = base.copy()
        hits = np.flatnonzero(base)
        top = hits
        if len(top) > _TOP:  # the best _TOP, and every memory tied with the last of them
            top = top[base[top] >= np.partition(base[top], len(top) - _TOP)[len(top) - _TOP]]
        sessions = index.session.data
        codes = np.unique(sessions[top])
        codes = codes[codes >= 0]
        inside = hits[np.isin(sessions[hits], codes)]  # matches in the touched sessions
        if self.neighbours and len(inside):
            score += self.neighbours * _nearby(index, inside, base)
        hit = np.flatnonzero(score)
        matched = score[hit]  # BM25 plus neighbours, before the factors
        if len(inside):
            totals = _session_totals(sessions[inside], base[inside])
            best_session = float(totals[codes].max())
            if self.session and best_session > 0:
                scored = hit[np.isin(sessions[hit], codes)]
                score[scored] *= 1.0 + self.session * totals[sessions[scored]] / best_session
        parts = {
            "bm25": base[hit],
            "neighbours": matched - base[hit],
            "session": score[hit] / matched,
        }
        # ── quality hooks: factors from recall/speakers.py and recall/when.py ──
        named = named_speakers(words(query.text), index.speakers) if self.speaker else []
        parts["speaker"] = speaker_factor(index.speaker.data, hit, named, self.speaker)
        asked = asked_times(query.text, query.now) if self.dates else AskedTimes()
        parts["dates"] = date_factor(index.created.data, hit, asked, self.dates)
        if named or asked:
            score[hit] *= parts["speaker"] * parts["dates"]
        return score, Components(hit, parts)

    def score_parts(
        self, query: Query, docs: np.ndarray, cosines: np.ndarray
    ) -> tuple[np.ndarray, Components]:
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

    def presort(self, query: Query, cosines: np.ndarray) -> Presorted:
        """Relevance, scaled by the best passing one once the filters found it."""
        relevance, parts = self.relevance_parts(query)

        def scale(values: np.ndarray, best: float) -> np.ndarray:
            scaled: np.ndarray = values / best
            return scaled

        def scaled_parts(best: float) -> Components:
            if best <= 0.0:
                return Components()
            parts.values["relevance"] = relevance[parts.docs] / best
            return parts

        return Presorted(relevance, scale, scaled_parts)

    def score_docs(self, query: Query, docs: np.ndarray, cosines: np.ndarray) -> np.ndarray:
        """Relevance scaled to [0, 1] by the best candidate, blended with recency; NaN: no match."""
        return self.score_parts(query, docs, cosines)[0]
