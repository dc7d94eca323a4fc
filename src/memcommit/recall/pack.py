"""Packing is poolsplit: ranked memories become poolsplit entries, and its loop decides.

Every decision (selected, over budget, over the record limit, always) is told
by poolsplit's ``on_decision`` from inside the loop that packs; nothing here
re-implements that loop. For speed, only a prefix of the ranking is handed to
poolsplit when that provably gives the same selection: after the prefix, each
pool is either at its entry cap or has fewer tokens left than the cheapest
memory not in the prefix. Otherwise the prefix grows (at most to everything).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

import poolsplit
from memcommit.model import Memory
from memcommit.recall.budget import Tokens, Words
from memcommit.recall.columns import iso_micros
from memcommit.recall.index import Snapshot

_FIRST_PREFIX = 128


@dataclass
class Packed:
    """poolsplit's result as documents, with every decision it reported."""

    pools: dict[str, list[int]]
    decisions: list[poolsplit.Decision] = field(default_factory=list)
    complete: bool = True  # True when every ranked memory was handed to poolsplit

    @property
    def used(self) -> dict[str, int]:
        """Cost of everything each pool selected (always-scope memories included)."""
        chosen = {(d.pool, d.entry["doc"]): d.cost for d in self.decisions if taken(d)}
        return {name: sum(chosen[(name, doc)] for doc in docs) for name, docs in self.pools.items()}


def taken(decision: poolsplit.Decision) -> bool:
    """True when the pool put the memory in the context (selected or always)."""
    return decision.outcome in (poolsplit.SELECTED, poolsplit.ALWAYS)


def _stored_score(entry: dict[str, Any], context: Any, *, now: Any) -> float:
    """The score recall already computed (poolsplit's scorer hook)."""
    return entry["score"]


def _active(entry: dict[str, Any]) -> bool:
    """Validity was decided by recall's filters (with a reason), not here."""
    return True


class Packer:
    """Turns ranked documents of one tenant index into poolsplit entries and packs them."""

    def __init__(
        self,
        snap: Snapshot,
        budget: Words | Tokens,
        pools: Sequence[poolsplit.Pool],
        now: datetime,
        load: Callable[[Sequence[str]], list[Memory]],
    ) -> None:
        self.snap = snap
        self.budget = budget
        self.pools = list(pools)
        self.now = now
        self.load = load

    def _entries(self, docs: Sequence[int], scores: Sequence[float | None]) -> list[dict]:
        snap = self.snap
        doc_array = np.asarray(docs, dtype=np.int64)
        costs, exact = self.budget.costs(snap, doc_array)
        memories = None if exact else self.load([snap.ids[doc] for doc in docs])
        kinds, scopes = snap.kinds.values, snap.scopes.values
        always = snap.always
        entries = []
        for position, (doc, score) in enumerate(zip(docs, scores, strict=True)):
            entry = {
                "id": snap.ids[doc],
                "type": kinds[snap.kind[doc]],
                "scope": "always" if always[doc] else scopes[snap.scope[doc]],
                "created": iso_micros(int(snap.created[doc])),
                "score": score,
                "doc": doc,
            }
            cost = int(costs[position])
            if memories is not None:
                entry["content"] = memories[position].content
                if isinstance(self.budget, Tokens) and memories[position].token_count:
                    entry["token_count"] = memories[position].token_count
            elif cost > 0:
                entry["token_count"] = cost
            else:
                entry["content"] = ""
            entries.append(entry)
        return entries

    def _order(self, docs: np.ndarray, scores: np.ndarray, take: int) -> list[int]:
        """Positions of the ``take`` best (all ties at the boundary too), in poolsplit's order."""
        n = len(docs)
        if take < n:
            kth = np.partition(scores, n - take)[n - take]
            positions = np.flatnonzero(scores >= kth)
        else:
            positions = np.arange(n)
        created, ids = self.snap.created, self.snap.ids
        # created microseconds order exactly like the fixed-width ISO strings poolsplit compares
        return sorted(
            positions.tolist(),
            key=lambda p: (-scores[p], int(created[docs[p]]), ids[docs[p]]),
        )

    def pack(
        self, always: Sequence[int], docs: np.ndarray, scores: np.ndarray, *, full: bool
    ) -> Packed:
        """Pack ``always`` (loaded first, in order) and ranked ``docs`` (with ``scores``)."""
        always_entries = self._entries(always, [None] * len(always))
        n = len(docs)
        take = n if full else _FIRST_PREFIX
        while True:
            order = self._order(docs, scores, take)
            entries = always_entries + self._entries(
                [int(docs[p]) for p in order], [float(scores[p]) for p in order]
            )
            decisions: list[poolsplit.Decision] = []
            result = poolsplit.retrieve_pools(
                entries,
                self.pools,
                None,
                scorer=_stored_score,
                token_counter=self.budget.counter,
                is_active=_active,
                now=self.now,
                on_decision=decisions.append,
            )
            packed = Packed(
                {name: [e["doc"] for e in chosen] for name, chosen in result.items()},
                decisions,
                complete=len(order) == n,
            )
            if packed.complete or self._settled(packed, docs, order):
                return packed
            take *= 4

    def _settled(self, packed: Packed, docs: np.ndarray, order: list[int]) -> bool:
        """True when nothing outside the prefix could be selected by any pool."""
        rest = np.ones(len(docs), dtype=bool)
        rest[order] = False
        costs, _ = self.budget.costs(self.snap, docs[rest])
        cheapest = int(costs.min()) if len(costs) else 0
        used: dict[str, int] = {}
        count: dict[str, int] = {}
        for d in packed.decisions:
            if d.outcome == poolsplit.SELECTED:
                used[d.pool] = used.get(d.pool, 0) + d.cost
                count[d.pool] = count.get(d.pool, 0) + 1
        return all(
            count.get(pool.name, 0) >= pool.max_entries
            or used.get(pool.name, 0) + cheapest > pool.max_tokens
            for pool in self.pools
        )
