"""The explanation of one recall: a row per memory, counted at once, built a page at a time.

Explaining a million memories must not cost a million `Row` objects (and a
million memories read from the store) when a page shows a hundred. So the
outcome of every document is kept as a small code in a numpy array, decided
from the index snapshot the recall ranked (the filters re-applied column-wise)
and from poolsplit's decisions; counts per outcome, reason and stage come from
those arrays. A `Row` is built only for the rows asked for, reading only their
memories (their text as stored when the page is built).

Packing visits only a prefix of the ranking (see `memcommit.recall.pipeline.pack`); the
memories ranked below it get the decision poolsplit's own rule gives them,
exactly what packing the whole ranking would have reported.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import poolsplit
from memcommit.errors import InvalidInput
from memcommit.model import Memory
from memcommit.recall.index.snapshot import Snapshot
from memcommit.recall.pipeline.filters import PASSED, Scope, apply
from memcommit.recall.pipeline.pack import Packed, Packer, taken
from memcommit.recall.pipeline.reasons import FILTERS, Reason
from memcommit.recall.pipeline.row import Row
from memcommit.recall.scoring.components import Components

#: Which rows a page lists.
PAGES = ("all", "selected", "excluded")

# The reasons rows carry, as plain strings (module globals: read once per row built).
_FILTERED = tuple(reason.value for reason in FILTERS)  # by filter code - 1
_NO_LEXICAL_MATCH = Reason.NO_LEXICAL_MATCH.value
_CLAIMED_BY_POOL = Reason.CLAIMED_BY_POOL.value

# What happened to each document, beyond the filter reasons (codes 1..len(FILTERS)).
_HIDDEN = -1  # not a current memory of the tenant: no row
_NO_MATCH = len(FILTERS) + 1  # passed the filters, but the scorer gave it no score
_DECIDED = _NO_MATCH + 1  # poolsplit decided it (selected or not)
_UNSEEN = _DECIDED + 1  # ranked below everything poolsplit saw: Packed.unseen_outcome


@dataclass(frozen=True)
class ExplanationCounts:
    """How many rows an explanation has, by outcome, by exclusion reason and by stage."""

    selected: int
    excluded: int
    reasons: dict[str, int]  # excluded rows per reason code (codes with none left out)
    stages: dict[str, int]  # rows per stage reached: "filters", "ranking", "packing"

    @property
    def rows(self) -> int:
        """Every row: one per memory the tenant can see."""
        return self.selected + self.excluded


@dataclass
class _Decided:
    """The last decision about one document and its trail through the pools."""

    decision: poolsplit.Decision
    trail: list[tuple[str, str]]


class Explanation:
    """Why each memory of one recall is in or out of the context; computed on demand.

    ``counts()`` and ``page()`` read only the index's columns and poolsplit's
    decisions, plus the memories of the rows returned; ``rows()`` is every row.
    Row order is the table's: the selected memories in render order, then the
    rest by blended score (highest first; rows without a score last), creation
    time and id.
    """

    def __init__(
        self,
        snap: Snapshot,
        scope: Scope,
        now_us: int,
        cosines: Callable[[], np.ndarray],
        scores: Callable[[], np.ndarray],
        pools: Sequence[poolsplit.Pool],
        packed: Packed,
        components: Callable[[], Components],
        packer: Packer,
        load: Callable[[Sequence[str]], list[Memory]],
    ) -> None:
        self.snap, self.scope, self.now_us = snap, scope, now_us
        self._components = components
        self._cosine_all, self._score_all = cosines, scores
        self.pools, self.packed, self.packer, self.load = list(pools), packed, packer, load
        self.selected = [doc for docs in packed.pools.values() for doc in docs]
        self._lock = threading.Lock()
        self._codes: np.ndarray | None = None
        self._decided: dict[int, _Decided] = {}
        self._unseen: dict[int, tuple[tuple[str, str], ...]] = {}  # kind code -> trail
        self._rest: np.ndarray | None = None

    @functools.cached_property
    def components(self) -> Components:
        """The parts of every score, computed when a row first needs them."""
        return self._components()

    @functools.cached_property
    def cosines(self) -> np.ndarray:
        """Every document's TF-IDF cosine, computed when a row first needs one."""
        return self._cosine_all()

    @functools.cached_property
    def scores(self) -> np.ndarray:
        """Every document's score (NaN: none), computed when a row first needs one."""
        return self._score_all()

    # ── what happened to every document ─────────────────────────────────────

    def _prepare(self) -> np.ndarray:
        """The outcome code of every document (computed once)."""
        with self._lock:
            if self._codes is None:
                self._codes = self._compute()
            return self._codes

    def _compute(self) -> np.ndarray:
        snap, packed = self.snap, self.packed
        codes = np.full(snap.size, _HIDDEN, dtype=np.int8)
        visible = np.flatnonzero(snap.alive)
        reasons = apply(snap, self.scope, self.now_us, visible)
        codes[visible] = np.where(reasons == PASSED, _NO_MATCH, reasons)
        for decision in packed.decisions:
            doc = decision.entry["doc"]
            found = self._decided.get(doc)
            if found is None:
                self._decided[doc] = _Decided(decision, [(decision.pool, decision.outcome)])
                continue
            found.trail.append((decision.pool, decision.outcome))
            if not taken(found.decision):
                found.decision = decision
        for doc, found in self._decided.items():
            codes[doc] = _DECIDED
            if taken(found.decision):  # later pools never see it: an earlier one claimed it
                kind = snap.kinds.values[snap.kind[doc]]
                names = [pool.name for pool in self.pools]
                later = self.pools[names.index(found.decision.pool) + 1 :]
                found.trail.extend(
                    (pool.name, _CLAIMED_BY_POOL)
                    for pool in later
                    if pool.types is None or kind in pool.types
                )
        unseen = packed.unvisited
        codes[unseen] = _UNSEEN
        for code in np.unique(snap.kind[unseen]).tolist():
            kind = snap.kinds.values[code]
            self._unseen[code] = tuple(
                (pool.name, packed.unseen_outcome(pool))
                for pool in self.pools
                if pool.types is None or kind in pool.types
            )
        return codes

    def counts(self) -> ExplanationCounts:
        """Rows by outcome, exclusion reason and stage, without building any row."""
        codes = self._prepare()
        reasons: dict[str, int] = {}

        def add(reason: str, n: int) -> None:
            if n:
                reasons[reason] = reasons.get(reason, 0) + n

        tally = np.bincount(codes[codes != _HIDDEN], minlength=_UNSEEN + 1)
        for code, reason in enumerate(_FILTERED, start=1):
            add(reason, int(tally[code]))
        add(_NO_LEXICAL_MATCH, int(tally[_NO_MATCH]))
        for found in self._decided.values():
            if not taken(found.decision):
                add(found.decision.outcome, 1)
        kinds = self.snap.kind[self.packed.unvisited]
        for code, n in zip(*np.unique(kinds, return_counts=True), strict=True):
            add(self._unseen[int(code)][-1][1], int(n))
        filtered = int(tally[1:_NO_MATCH].sum())
        packing = int(tally[_DECIDED] + tally[_UNSEEN])
        selected = len(self.selected)
        return ExplanationCounts(
            selected=selected,
            excluded=int(tally.sum()) - selected,
            reasons=reasons,
            stages={"filters": filtered, "ranking": int(tally[_NO_MATCH]), "packing": packing},
        )

    # ── rows ────────────────────────────────────────────────────────────────

    def _excluded(self) -> np.ndarray:
        """Every visible document not selected, in table order (sorted once)."""
        codes = self._prepare()
        with self._lock:
            if self._rest is None:
                rest = codes != _HIDDEN
                rest[self.selected] = False
                docs = np.flatnonzero(rest)
                scored = (codes[docs] >= _DECIDED) & ~np.isnan(self.scores[docs])
                by_score = np.where(scored, -self.scores[docs], math.inf)
                self._rest = docs[np.lexsort((self.snap.birth_rank[docs], by_score))]
            return self._rest

    def __len__(self) -> int:
        return int((self._prepare() != _HIDDEN).sum())

    def total(self, outcome: str = "all") -> int:
        """How many rows ``page`` can show for ``outcome`` ("all", "selected", "excluded")."""
        _check_outcome(outcome)
        counts = self.counts()
        return {"all": counts.rows, "selected": counts.selected, "excluded": counts.excluded}[
            outcome
        ]

    def page(self, offset: int = 0, limit: int | None = None, *, outcome: str = "all") -> list[Row]:
        """Rows ``offset`` .. ``offset + limit`` in table order, of one outcome or all."""
        _check_outcome(outcome)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidInput("offset", offset, "must be an int >= 0")
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise InvalidInput("limit", limit, "must be an int >= 0 or None")
        stop = None if limit is None else offset + limit
        first = self.selected if outcome != "excluded" else []
        docs = first[offset:stop]
        if outcome != "selected" and (stop is None or stop > len(first)):
            start = max(0, offset - len(first))
            end = None if stop is None else stop - len(first)
            docs = [*docs, *self._excluded()[start:end].tolist()]
        return self._rows_of(docs)

    def rows(self) -> list[Row]:
        """Every row, in table order."""
        return self.page()

    def _rows_of(self, docs: Sequence[int]) -> list[Row]:
        """The rows of ``docs`` (index documents), reading their memories in one load."""
        codes = self._prepare()
        memories = self.load([self.snap.ids[doc] for doc in docs])
        unseen = [(doc, m) for doc, m in zip(docs, memories, strict=True) if codes[doc] == _UNSEEN]
        costs = dict(
            zip(
                (doc for doc, _ in unseen),
                self.packer.costs([doc for doc, _ in unseen], [m for _, m in unseen]),
                strict=True,
            )
        )
        return [
            self._row(doc, int(codes[doc]), m, costs.get(doc))
            for doc, m in zip(docs, memories, strict=True)
        ]

    def _row(self, doc: int, code: int, memory: Memory, cost: int | None) -> Row:
        if code < _NO_MATCH:
            reason = _FILTERED[code - 1]
            return Row(memory, "filters", None, None, "excluded", reason, None, None)
        cosine = float(self.cosines[doc])
        if code == _NO_MATCH:
            return Row(memory, "ranking", cosine, None, "excluded", _NO_LEXICAL_MATCH, None, None)
        raw = self.scores[doc]
        score = None if math.isnan(raw) else float(raw)
        parts = self.components.of(doc) if score is not None else None
        if code == _UNSEEN:
            trail = self._unseen[int(self.snap.kind[doc])]
            pool, reason = trail[-1]
            return Row(
                memory, "packing", cosine, score, "excluded", reason, pool, cost, trail, parts
            )
        found = self._decided[doc]
        decision = found.decision
        outcome, verdict = ("selected", None) if taken(decision) else ("excluded", decision.outcome)
        return Row(
            memory,
            "packing",
            cosine,
            score,
            outcome,
            verdict,
            decision.pool,
            int(decision.cost),
            tuple(found.trail),
            parts,
        )


def _check_outcome(outcome: Any) -> None:
    if outcome not in PAGES:
        raise InvalidInput("outcome", outcome, "must be one of " + ", ".join(PAGES))
