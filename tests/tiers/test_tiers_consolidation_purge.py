"""A mid-term consolidation never keeps text that had to go: a purge of anything it
summarized purges it, and one landing while it is made leaves the segment in mid-term."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
from tiers_helpers import showing

from memcommit.compaction import outline
from memcommit.tiers.memory import TieredMemory

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def at(minutes: int) -> datetime:
    return T + timedelta(minutes=minutes)


@pytest.fixture
def secret() -> str:
    return f"zsecret{uuid.uuid4().hex}"


def traced(store, secret: str, holder: str) -> dict[str, str]:
    """A finished trace of tenant acme whose ``holder`` ("root", "one" or "two") holds
    ``secret``: the ids of its root and two steps by name."""
    texts = {"root": "Diagnose the patient", "one": "read the chart", "two": "wrote the letter"}
    texts[holder] += f" {secret}"
    with store.commit(message="trace", now=T) as tx:
        root = tx.begin_trace(texts["root"], tenant="acme")
        ids = {"root": root, **{n: tx.step(root, texts[n]).id for n in ("one", "two")}}
        tx.finish(root)
    return ids


@pytest.mark.parametrize(
    ("purged", "resident"),
    [("root", "root"), ("one", "one")],
    ids=["the root", "a step still in short-term"],
)
def test_purging_a_memory_summarized_but_not_consolidated_purges_the_summary(
    make_store, secret, purged, resident
):
    """The summary carries the whole trace, so it is linked to every memory of it, not
    only to the mid-term members it replaced."""
    store = make_store()
    ids = traced(store, secret, purged)
    tm = TieredMemory(store, capacity=1, mid_capacity=1, auto=False)
    tm.touch([ids[resident]], now=at(1))  # it stays in short-term; the other two go to mid
    assert len(tm.maintain(now=at(2)).consolidated) == 1
    (summary,) = store.find(kinds=["summary"])
    assert secret in summary.content and store.get(ids[purged]).tier == "short"
    with store.commit(message="forget", now=at(3)) as tx:
        tx.purge(ids[purged])
    assert store.get(summary.id).status == "purged"
    assert showing(store, secret, tenant="acme", now=at(4)) == []


CHANGES = {
    "a member purged": ("one", "purge"),
    "the root purged": ("root", "purge"),
    "the root rewritten": ("root", "update"),
}


@pytest.mark.parametrize(("victim", "change"), CHANGES.values(), ids=list(CHANGES))
def test_a_memory_changed_while_its_segment_is_summarized_leaves_the_segment(
    make_store, secret, victim, change
):
    """Another writer purges (or rewrites) a memory the summarizer was given: the summary
    is not written, the failure is reported, and the rest of maintenance still runs."""
    store, other = make_store("tiers.db"), make_store("tiers.db")
    ids = traced(store, secret, victim)
    with store.commit(message="long-term facts", now=T) as tx:
        old = [tx.add(f"fact {n}", tenant="acme", tier="long").id for n in range(2)]

    def summarizer(trace):
        with other.commit(message="another writer", now=at(3)) as tx:
            if change == "purge":
                tx.purge(ids[victim])
            else:
                tx.update(ids[victim], content="Diagnose the patient again")
        return outline(trace)

    tm = TieredMemory(
        store, capacity=1, mid_capacity=1, long_capacity=1, summarizer=summarizer, auto=False
    )
    tm.touch([ids["root"]], now=at(1))
    result = tm.maintain(now=at(2))
    assert result.consolidated == [] and store.find(kinds=["summary"], live=False) == []
    (error,) = result.errors
    assert error.segment == ids["root"] and error.reason.startswith("changed meanwhile")
    assert tm.stats.total.consolidation_errors == 1
    assert len(result.trimmed) == 1 and set(result.trimmed) < set(old)  # long-term was trimmed
    assert showing(store, secret, tenant="acme", now=at(4)) == []
    mid = {ids["two"]} if victim == "one" else {ids["one"], ids["two"]}
    assert {m.id for m in store.find(tiers=["mid"])} == mid  # the segment stayed
