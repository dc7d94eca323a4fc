"""Small shared pieces for the tiers tests: traces, candidates, and what still shows a text."""

from __future__ import annotations

from memcommit.model import Memory
from memcommit.recall import recall
from memcommit.tiers import Candidate
from memcommit.tiers.traces import with_loops, with_scans, zipf


def small_traces() -> dict[str, list[int]]:
    """Zipf over 5k ids (20k requests), and the same with scans and with loops.

    Scans of 600 fresh ids and loops of 300 ids (3 times) are longer than the
    small capacity and shorter than the large one, so both behaviours show.
    """
    base = zipf(20_000, 5_000, 0.8, seed=7)
    return {
        "zipf": base,
        "scans": with_scans(base, every=2_000, length=600),
        "loops": with_loops(base, every=2_000, span=300, repeats=3),
    }


def cand(
    id: str,
    *,
    uses: int = 1,
    last: int | None = None,
    first: int | None = None,
    tick: int = 100,
    entered: int = 0,
    importance: float = 0.5,
    kind: str = "fact",
    created_at=None,
) -> Candidate:
    """A short-term candidate with the given use counts."""
    last = tick if last is None and uses else last
    first = last if first is None else first
    memory = Memory(id=id, content=id, kind=kind, importance=importance, created_at=created_at)
    return Candidate(memory, "short", "active", uses, first, last, tick, entered)


def showing(store, text: str, *, tenant: str, now) -> list[str]:
    """Ids of the memories that still show ``text`` through find, get or recall."""
    found = store.find(tenant=tenant, live=False)
    fetched = [store.get(m.id) for m in found]
    recalled = [row.memory for row in recall(store, text, tenant=tenant, now=now).rows]
    return sorted(
        {m.id for m in (*found, *fetched, *recalled) if text in f"{m.content}{m.metadata}{m.tags}"}
    )
