"""Compactor over a real SQLite store: one commit per compaction, nothing lost."""

from __future__ import annotations

from datetime import timedelta

import pytest
from compaction_store import T0, add_trace, dump, later, showing

import memcommit
from memcommit.compaction import (
    COMPACTED_INTO,
    Compactor,
    FinishedTraces,
    KeepFailed,
    OlderThan,
    UnderPressure,
    outline,
)
from memcommit.errors import InvalidInput


@pytest.fixture
def store(make_store):
    """A fresh store on each backend (SQLite file, PostgreSQL schema)."""
    return make_store("mem.db")


def test_a_finished_trace_becomes_a_summary_and_an_archive(store) -> None:
    trace_id = add_trace(store, "Deploy the billing service", lines=["Built image", "Rolled out"])
    before = store.head
    result = Compactor(store, policy=FinishedTraces(), summarizer=outline).compact(now=later(5))

    assert result.traces == (trace_id,)
    assert len(result.commits) == 1 and result.commit == store.head
    assert result.commit.parent == before.id
    assert result.errors == ()
    (summary,) = result.summaries
    assert (summary.kind, summary.tier, summary.tenant, summary.scope) == (
        "summary",
        "long",
        "default",
        "shared",
    )
    assert summary.content.splitlines()[0] == "Deploy the billing service"
    assert "Built image" in summary.content and "Rolled out" in summary.content
    trace = store.trace(trace_id, as_of=before.seq)
    prov = summary.metadata["provenance"]
    assert prov["trace_id"] == trace_id
    assert prov["built_from"] == [trace.root.id, *(s.id for s in trace.steps)]
    assert summary.metadata["summary"] == outline(trace)
    assert summary.metadata["task"] == "Deploy the billing service"
    assert summary.metadata["summarizer"] == "outline"

    # Steps are archived; the root is archived too, marked with its summary.
    assert set(result.moved) == {s.id for s in trace.steps}
    now = store.trace(trace_id)
    assert [s.tier for s in now.steps] == ["archive", "archive"]
    assert now.root.tier == "archive" and now.root.metadata[COMPACTED_INTO] == summary.id
    assert store.get(summary.id) == summary
    ops = sorted(c.op for c in result.commit.changes)
    assert ops == ["add", "archive", "archive", "update"]


def test_reads_before_the_compaction_still_show_the_steps(store) -> None:
    trace_id = add_trace(store, "Rotate keys", steps=4)
    before = store.head.seq
    result = Compactor(store).compact(now=later(5))
    old = store.trace(trace_id, as_of=before)
    assert [s.tier for s in old.steps] == ["short"] * 4
    assert COMPACTED_INTO not in old.root.metadata
    assert store.find(kinds=["summary"], as_of=before) == []
    for step_id in result.moved:
        assert [m.tier for m in store.history(step_id)] == ["short", "archive"]
    assert store.find(trace=trace_id, tiers=["archive"]) != []


def test_open_traces_and_compacted_ones_are_left_alone(store) -> None:
    done = add_trace(store, "done")
    add_trace(store, "still running", status="open")
    compactor = Compactor(store)
    assert compactor.compact(now=later(1)).traces == (done,)
    head = store.head
    again = compactor.compact(now=later(2))
    assert again.traces == () and again.commit is None
    assert store.head == head  # no empty commit


def test_failed_traces_are_compacted_with_their_errors(store) -> None:
    trace_id = add_trace(store, "migrate db", status="failed", errors={2: "lock timeout"})
    (summary,) = Compactor(store).compact(now=later(1)).summaries
    assert summary.metadata["summary"]["errors"] == [{"step": 2, "error": "lock timeout"}]
    assert "lock timeout" in summary.content
    assert store.trace(trace_id).status == "failed"


def test_older_than_with_injected_now(store) -> None:
    old = add_trace(store, "old", at=T0)
    add_trace(store, "exact", at=T0 + timedelta(hours=1))
    now = T0 + timedelta(hours=2)
    result = Compactor(store, policy=OlderThan(timedelta(hours=1))).compact(now=now)
    assert result.traces == (old,)


def test_keep_failed_at_exactly_n_records(store) -> None:
    ok = add_trace(store, "ok", at=later(1))
    f1 = add_trace(store, "f1", status="failed", steps=2, at=later(2))
    add_trace(store, "f2", status="failed", steps=3, at=later(3))
    add_trace(store, "f3", status="failed", steps=2, at=later(4))
    result = Compactor(store, policy=KeepFailed(records=5)).compact(now=later(10))
    assert set(result.traces) == {ok, f1}


def test_under_pressure_counts_what_the_store_holds(store) -> None:
    a = [add_trace(store, f"a{i}", steps=5, scope="a", at=later(i)) for i in range(3)]
    add_trace(store, "b0", steps=5, scope="b", at=later(3))
    # Partition a holds 3 x 6 = 18 records; each compaction frees 6 - 1 = 5 (root and steps).
    result = Compactor(store, policy=UnderPressure(12)).compact(now=later(10))
    assert result.traces == tuple(a[:2])
    held = store.find(scopes=["a"], tiers=["short", "mid", "long"])
    assert len(held) == 8
    assert Compactor(store, policy=UnderPressure(12)).compact(now=later(11)).traces == ()


def test_batches_write_several_commits_and_report_progress(store) -> None:
    ids = [add_trace(store, f"t{i}", at=later(i)) for i in range(5)]
    seen = []
    result = Compactor(store).compact(
        now=later(10), batch=2, progress=lambda done, total: seen.append((done, total))
    )
    assert result.traces == tuple(ids)
    assert len(result.commits) == 3
    assert seen == [(i, 5) for i in range(1, 6)]


class Sloppy:
    """A policy that returns open traces and repeats: the compactor keeps it safe."""

    def select(self, traces, now, held):
        return [*traces, *traces]


def test_a_sloppy_policy_cannot_compact_open_traces_or_twice(store) -> None:
    done = add_trace(store, "done")
    add_trace(store, "open", status="open")
    assert Compactor(store, policy=Sloppy()).compact(now=later(1)).traces == (done,)
    assert Compactor(store, policy=Sloppy()).compact(now=later(2)).traces == ()


def test_without_now_the_store_clock_dates_the_commit(tmp_path) -> None:
    store = memcommit.open(str(tmp_path / "clock.db"), clock=lambda: later(30))
    add_trace(store, "x", at=later(1))
    assert Compactor(store).compact().commit.time == later(30)
    store.close()


def test_select_reads_only(store) -> None:
    trace_id = add_trace(store, "x")
    head = store.head
    assert [t.id for t in Compactor(store).select(now=later(1))] == [trace_id]
    assert store.head == head


def test_root_changed_after_reading_is_left_alone(store) -> None:
    """A root that moves on between read and write (another writer) is not compacted."""
    first = add_trace(store, "first", at=later(1))
    second = add_trace(store, "second", at=later(2))

    def meddling(trace):
        if trace.id == first:
            with store.commit(message="someone else", now=later(3)) as tx:
                tx.update(first, importance=0.9)
        return outline(trace)

    result = Compactor(store, summarizer=meddling).compact(now=later(4))
    assert result.traces == (second,)
    assert [e.trace_id for e in result.errors] == [first]
    assert "expected_version" in result.errors[0].error
    assert [s.tier for s in store.trace(first).steps] == ["short"] * 3


def test_a_step_purged_after_reading_leaves_its_trace_alone(store) -> None:
    first = add_trace(store, "first", at=later(1))
    second = add_trace(store, "second", at=later(2))
    victim = store.trace(first).steps[1].id

    def meddling(trace):
        if trace.id == first:
            with store.commit(message="privacy request", now=later(3)) as tx:
                tx.purge(victim)
        return outline(trace)

    result = Compactor(store, summarizer=meddling).compact(now=later(4))
    assert result.traces == (second,)
    assert [e.trace_id for e in result.errors] == [first]
    assert "purged" in result.errors[0].error
    # Next time it compacts, and the purged step's content never reaches the summary.
    (summary,) = Compactor(store).compact(now=later(5)).summaries
    assert "first: step 2" not in summary.content
    assert "first: step 3" in summary.content


@pytest.mark.parametrize("change", ["purged", "rewritten"])
def test_an_archived_step_changed_by_another_writer_leaves_its_trace_alone(
    make_store, change
) -> None:
    """A step the compaction would not move (already archived) is checked all the same:
    a summary landing after another writer's purge would bring the purged text back."""
    store, other = make_store("mem.db"), make_store("mem.db")
    secret = "card 4111-1111-1111-1111"
    trace_id = add_trace(store, "Onboard the customer", lines=["sent the mail", secret])
    step = store.trace(trace_id).steps[1].id
    with store.commit(message="evicted earlier", now=later(1)) as tx:
        tx.archive(step)

    def meddling(trace):
        with other.commit(message="another writer", now=later(2)) as tx:
            if change == "purged":
                tx.purge(step)
            else:
                tx.update(step, content="card on file")
        return outline(trace)

    result = Compactor(store, summarizer=meddling).compact(now=later(3))
    assert result.traces == () and result.commits == ()
    assert [e.trace_id for e in result.errors] == [trace_id]
    assert result.errors[0].error.startswith("changed meanwhile")
    assert store.find(kinds=["summary"], live=False) == []
    assert showing(store, secret, tenant="default", now=later(4)) == []
    (summary,) = Compactor(store).compact(now=later(5)).summaries  # next time it compacts
    assert "sent the mail" in summary.content and secret not in summary.content


class ListedBeforeRead:
    """A store whose trace listing and the read of the traces' memories are two reads,
    with ``between`` run in the gap: another writer landing a commit there."""

    def __init__(self, store, between) -> None:
        self.store, self.between = store, between

    def traces(self, **kwargs):
        listed = self.store.traces(**kwargs)
        self.between()
        return [self.store.trace(t.id) for t in listed]

    def __getattr__(self, name):
        return getattr(self.store, name)


def test_a_trace_compacted_between_its_listing_and_its_read_is_not_compacted_again(
    make_store,
) -> None:
    """Two compactors at once: the second lists the trace unmarked, the first compacts it,
    and the second then reads its root marked, at a version that stays current."""
    store, other = make_store("mem.db"), make_store("mem.db")
    trace_id = add_trace(store, "Rotate the keys")
    racing = ListedBeforeRead(store, lambda: Compactor(other).compact(now=later(1)))
    result = Compactor(racing).compact(now=later(2))
    assert result.traces == () and result.errors == ()
    (summary,) = store.find(kinds=["summary"], live=False)
    assert store.trace(trace_id).root.metadata[COMPACTED_INTO] == summary.id


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"policy": "finished"}, "policy"),
        ({"summarizer": "outline"}, "summarizer"),
        ({"max_bytes": 0}, "max_bytes"),
        ({"merger": None}, "merger"),
    ],
)
def test_bad_arguments_name_the_field(store, kwargs, field) -> None:
    with pytest.raises(InvalidInput) as info:
        Compactor(store, **kwargs)
    assert info.value.field == field


def test_bad_call_arguments_change_nothing(store) -> None:
    add_trace(store, "x")
    before = dump(store)
    compactor = Compactor(store)
    for call in (
        lambda: compactor.compact(now=T0.replace(tzinfo=None)),
        lambda: compactor.compact(now=later(1), batch=0),
        lambda: compactor.merge(by="tenant"),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert dump(store) == before
