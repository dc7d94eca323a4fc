"""Packing is poolsplit: ranked memories become poolsplit entries, and its loop decides.

Every decision (selected, over budget, over the record limit, always) is told
by poolsplit's ``on_decision`` from inside the loop that packs; nothing here
re-implements that loop. For speed, only a prefix of the ranking is handed to
poolsplit, grown (at most to everything) until it provably decides the same as
the whole ranking would: after the prefix, each pool is either at its entry
cap or has fewer tokens left than the cheapest memory not in the prefix.

Then the memories poolsplit never saw (``Packed.unvisited``, all ranked below
every one it saw) get exactly the decisions the whole ranking would have given
them, by poolsplit's own rule (`Packed.unseen_outcome`). With the whole
ranking, poolsplit would first make the same decisions for the prefix: it
walks in rank order, and its one look-ahead (after 32 skips, "can the cheapest
entry left still fit?") can only stop it early where every entry left is too
big anyway, so each prefix entry is skipped or selected alike. Then, per pool:

- at its entry cap, the loop ends and every entry left is ``over_record_limit``;
- otherwise the tokens left are fewer than the cheapest unseen memory costs, so
  each one is skipped as ``over_budget`` (one by one, or all at once when the
  look-ahead finds that nothing left can fit: the same outcome).

An unseen memory is never selected, so no pool claims it: every pool whose
types cover its kind decides it, in pool order.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

import poolsplit
from memcommit.model import Memory
from memcommit.recall.index.columns import iso_micros_many
from memcommit.recall.index.snapshot import Snapshot
from memcommit.recall.pipeline.budget import Tokens, Words
from memcommit.recall.pipeline.ranking import Ranking

_FIRST_PREFIX = 128


@dataclass
class Packed:
    """poolsplit's result as documents, with every decision it reported."""

    pools: dict[str, list[int]]
    decisions: list[poolsplit.Decision] = field(default_factory=list)
    #: Finds the ranked documents poolsplit never saw (read as `unvisited`).
    rest: Callable[[], np.ndarray] = field(default=lambda: np.zeros(0, dtype=np.int64))

    @functools.cached_property
    def unvisited(self) -> np.ndarray:
        """Ranked documents poolsplit never saw (ranked below all it saw), in no order."""
        return self.rest()

    @property
    def used(self) -> dict[str, int]:
        """Cost of everything each pool selected (always-scope memories included)."""
        chosen = {(d.pool, d.entry["doc"]): d.cost for d in self.decisions if taken(d)}
        return {name: sum(chosen[(name, doc)] for doc in docs) for name, docs in self.pools.items()}

    def contextual(self) -> dict[str, tuple[int, int]]:
        """(memories, cost) each pool selected under its caps (always-scope ones bypass them)."""
        out: dict[str, tuple[int, int]] = {name: (0, 0) for name in self.pools}
        for d in self.decisions:
            if d.outcome == poolsplit.SELECTED:
                count, cost = out[d.pool]
                out[d.pool] = (count + 1, cost + d.cost)
        return out

    def unseen_outcome(self, pool: poolsplit.Pool) -> str:
        """What ``pool`` decided for a memory in ``unvisited`` (see the module docstring)."""
        count, _ = self.contextual()[pool.name]
        return poolsplit.OVER_RECORD_LIMIT if count >= pool.max_entries else poolsplit.OVER_BUDGET


def taken(decision: poolsplit.Decision) -> bool:
    """True when the pool put the memory in the context (selected or always)."""
    return decision.outcome in (poolsplit.SELECTED, poolsplit.ALWAYS)


def _stored_score(entry: dict[str, Any], context: Any, *, now: Any) -> float:
    """The score recall already computed (poolsplit's scorer hook)."""
    score: float = entry["score"]
    return score


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

    def _entries(self, docs: Sequence[int], scores: Sequence[float | None]) -> list[dict[str, Any]]:
        snap = self.snap
        doc_array = np.asarray(docs, dtype=np.int64)
        costs, exact = self.budget.costs(snap, doc_array)
        memories = None if exact else self.load([snap.ids[doc] for doc in docs])
        kinds, scopes = snap.kinds.values, snap.scopes.values
        always = snap.always
        created = iso_micros_many(snap.created[doc_array])
        entries = []
        for position, (doc, score) in enumerate(zip(docs, scores, strict=True)):
            entry = {
                "id": snap.ids[doc],
                "type": kinds[snap.kind[doc]],
                "scope": "always" if always[doc] else scopes[snap.scope[doc]],
                "created": created[position],
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

    def _first_take(self) -> int:
        """How many ranked memories to show poolsplit first: what the entry caps allow."""
        return min(_FIRST_PREFIX, sum(pool.max_entries for pool in self.pools))

    def pack(self, always: Sequence[int], ranking: Ranking) -> Packed:
        """Pack ``always`` (loaded first, in order) and the best of ``ranking``."""
        always_entries = self._entries(always, [None] * len(always))
        take = self._first_take()
        while True:
            docs, scores = ranking.top(take)
            entries = always_entries + self._entries(docs.tolist(), scores.tolist())
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
                functools.partial(ranking.rest, docs),
            )
            if self._settled(packed):
                return packed
            take *= 4

    def _settled(self, packed: Packed) -> bool:
        """True when no pool could select anything poolsplit has not seen.

        A pool at its entry cap selects nothing more; only when some pool is
        not are the unseen memories found, to price the cheapest of them.
        """
        selected = packed.contextual()
        open_pools = [pool for pool in self.pools if selected[pool.name][0] < pool.max_entries]
        if not open_pools or not len(packed.unvisited):
            return True
        costs, _ = self.budget.costs(self.snap, packed.unvisited)
        cheapest = int(costs.min())
        return all(selected[pool.name][1] + cheapest > pool.max_tokens for pool in open_pools)

    def costs(self, docs: Sequence[int], memories: Sequence[Memory]) -> list[int]:
        """What poolsplit charges for each document (the cost of rows it never saw)."""
        costs, exact = self.budget.costs(self.snap, np.asarray(docs, dtype=np.int64))
        if exact:
            charged: list[int] = costs.tolist()
            return charged
        tokens = isinstance(self.budget, Tokens)
        return [
            m.token_count if tokens and m.token_count else self.budget.counter(m.content)
            for m in memories
        ]
