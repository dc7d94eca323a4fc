"""merge: the summaries of one task fold into one evolving summary."""

from __future__ import annotations

import pytest
from compaction_store import add_trace, later

from memcommit.compaction import Compactor


@pytest.fixture
def store(make_store):
    """A fresh store on each backend (SQLite file, PostgreSQL schema)."""
    return make_store("mem.db")


def live_summaries(store, **kw):
    return store.find(kinds=["summary"], **kw)


def test_runs_of_one_task_fold_into_one_summary(store) -> None:
    runs = [
        add_trace(store, "Nightly backup", at=later(i), status="failed" if i == 1 else "finished")
        for i in range(3)
    ]
    compactor = Compactor(store)
    olds = compactor.compact(now=later(5)).summaries
    result = compactor.merge(now=later(6))
    (merged,) = result.summaries
    assert set(result.superseded) == {s.id for s in olds}
    assert len(result.commit.changes) == 1 + len(olds)
    assert live_summaries(store) == [merged]
    data = merged.metadata["summary"]
    assert (data["task"], data["runs"], data["statuses"]) == (
        "Nightly backup",
        3,
        {"failed": 1, "finished": 2},
    )
    assert merged.metadata["provenance"]["trace_ids"] == runs
    assert merged.metadata["provenance"]["built_from"] == [s.id for s in olds]
    assert (merged.kind, merged.tier) == ("summary", "long")
    for old in olds:
        assert store.get(old.id).superseded_by == merged.id
    assert compactor.merge(now=later(7)).commit is None


def test_the_merged_summary_keeps_evolving(store) -> None:
    compactor = Compactor(store)
    for i in range(2):
        add_trace(store, "Nightly backup", at=later(i))
    compactor.compact(now=later(3))
    first = compactor.merge(now=later(4)).summaries[0]
    add_trace(store, "Nightly backup", at=later(5), lines=["Disk was full, pruned"])
    compactor.compact(now=later(6))
    (second,) = compactor.merge(now=later(7)).summaries
    assert second.metadata["summary"]["runs"] == 3
    assert first.id in second.metadata["provenance"]["built_from"]
    assert len(second.metadata["provenance"]["trace_ids"]) == 3
    assert "Disk was full, pruned" in second.content
    assert live_summaries(store) == [second]


def test_merge_never_mixes_scopes_or_tasks(store) -> None:
    for scope in ("planner", "planner", "coder"):
        add_trace(store, "Write the report", scope=scope)
    add_trace(store, "Something else")
    compactor = Compactor(store)
    compactor.compact(now=later(1))
    (merged,) = compactor.merge(now=later(2)).summaries
    assert merged.scope == "planner"
    assert len(live_summaries(store)) == 3


def test_merge_one_task_or_by_key(store) -> None:
    for task in ("a", "a", "b", "b"):
        add_trace(store, task)
    compactor = Compactor(store, key=lambda t: "letters")
    compactor.compact(now=later(1))
    assert [s.metadata["task"] for s in compactor.merge(task=" a ", now=later(2)).summaries] == [
        "a"
    ]
    (by_key,) = compactor.merge(by="key", key="letters", now=later(3)).summaries
    assert by_key.key == "letters"
    assert by_key.metadata["summary"]["runs"] == 4
    assert live_summaries(store) == [by_key]


def test_a_failing_merger_leaves_its_group(store) -> None:
    for task in ("a", "a", "b", "b"):
        add_trace(store, task)

    def merger(task, summaries):
        if task == "a":
            raise ValueError("no")
        return {"task": task, "runs": len(summaries)}

    compactor = Compactor(store, merger=merger)
    compactor.compact(now=later(1))
    result = compactor.merge(now=later(2))
    assert [s.metadata["task"] for s in result.summaries] == ["b"]
    assert [e.trace_id for e in result.errors] == ["a"]
    assert len(live_summaries(store)) == 3


def test_summaries_made_by_hand_merge_by_key_and_odd_ones_are_skipped(store) -> None:
    with store.commit(message="by hand", now=later(1)) as tx:
        tx.add("Deploys go through the canary first", kind="summary", key="deploys")
        tx.add("Canary takes ten minutes", kind="summary", key="deploys")
        tx.add("odd", kind="summary", metadata={"task": {"not": "text"}, "provenance": 3})
    compactor = Compactor(store)
    assert compactor.merge(now=later(2)).commit is None  # no task text to group on
    (merged,) = compactor.merge(by="key", now=later(3)).summaries
    assert merged.metadata["summary"]["lines"] == [
        "Deploys go through the canary first",
        "Canary takes ten minutes",
    ]
    assert merged.metadata["provenance"]["trace_ids"] == []
