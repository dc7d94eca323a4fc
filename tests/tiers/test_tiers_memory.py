"""TieredMemory over real stores (SQLite and PostgreSQL): touches, moves as commits, maintenance."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcommit.compaction import Compactor
from memcommit.errors import InvalidInput, NotFound
from memcommit.tiers import (
    ARC,
    FIFO,
    LFU,
    LRU,
    AccessCount,
    AnyOf,
    Forgetting,
    KindIn,
    Learned,
    Scored,
    TwoQueue,
    simulate,
)
from memcommit.tiers.memory import TieredMemory
from memcommit.tiers.traces import zipf

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


class Clock:
    """One second per reading, from a day before NOW: deterministic commit times."""

    def __init__(self) -> None:
        self.now = NOW - timedelta(days=1)  # so commits at an explicit NOW never go back

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def open_store(make_store, store_backend):
    """Open a store by name (again, for the same name) on the test's backend.

    SQLite stores are real files with fewer fsyncs (synchronous=NORMAL).
    """
    default = {"synchronous": "NORMAL"} if store_backend == "sqlite" else {}

    def open_(name: str = "tiers.db", **options):
        if store_backend != "sqlite":
            options.pop("synchronous", None)
        return make_store(name, **{**default, **options})

    return open_


@pytest.fixture
def store(open_store):
    return open_store(clock=Clock())


def add(store, n, *, tier="short", scope="shared", tenant="default", **kw):
    with store.commit(message=f"add {n}", now=NOW) as tx:
        return [
            tx.add(f"memory {i}", tier=tier, scope=scope, tenant=tenant, **kw).id for i in range(n)
        ]


def tiers_of(store, ids):
    return [store.get(i).tier for i in ids]


def test_touch_counts_hits_warm_hits_and_misses(store):
    (short,) = add(store, 1)
    (mid,) = add(store, 1, tier="mid")
    (long_,) = add(store, 1, tier="long")
    (gone,) = add(store, 1, tier="archive")
    tm = TieredMemory(store, capacity=4)
    result = tm.touch([short, mid, long_, gone], now=NOW)
    assert result.hits == [short]
    assert result.warm_hits == [mid, long_]
    assert result.misses == [gone] and result.paged_in == [gone]
    assert store.get(gone).tier == "short"
    assert store.get(mid).tier == "mid"
    total = tm.stats.total
    assert (total.hits, total.warm_hits, total.misses, total.page_ins) == (1, 2, 1, 1)
    assert {u.count for u in store.usage([short, mid, long_, gone]).values()} == {1}


def test_a_miss_pages_in_and_evicts_at_once_in_one_commit_by_tiers(store):
    resident = add(store, 3)
    archived = add(store, 1, tier="archive")[0]
    tm = TieredMemory(store, capacity=3, eviction=LRU())
    tm.touch(resident[1:], now=NOW)
    result = tm.touch([archived], now=NOW)
    assert result.evicted == [resident[0]]
    assert store.get(resident[0]).tier == "archive"
    commit = store.head
    assert commit.author == "tiers"
    assert "LRU" in commit.message and resident[0] in commit.message and archived in commit.message
    assert {c.op for c in commit.changes} == {"page_in", "archive"}
    assert len(tm.working()) == 3


def test_a_memory_that_no_longer_holds_is_a_miss_and_stays_out(store):
    a, b = add(store, 2)
    with store.commit(message="wrong") as tx:
        tx.invalidate(a)
    tm = TieredMemory(store, capacity=4)
    result = tm.touch([a, b], now=NOW + timedelta(days=1))
    assert result.misses == [a] and result.hits == [b] and result.paged_in == []
    assert [m.id for m in tm.working(now=NOW + timedelta(days=1))] == [b]


@pytest.mark.parametrize(
    "policy",
    [FIFO, LRU, LFU, TwoQueue, ARC, Forgetting, Scored, Learned],
    ids=lambda p: p.__name__,
)
def test_replaying_touches_gives_the_simulators_hits(store, policy):
    trace = zipf(250, 50, 0.8, seed=5)
    ids = add(store, 50, tier="archive")
    tm = TieredMemory(store, capacity=8, eviction=policy())
    hits = 0
    for x in trace:
        hits += len(tm.touch([ids[x - 1]], now=NOW).hits)
    assert hits == simulate(trace, capacity=8, policy=policy()).hits
    assert tm.stats.total.hits == hits


def test_touching_several_ids_at_once_is_the_same_cache_access_in_order(store):
    trace = zipf(600, 80, 0.8, seed=6)
    ids = add(store, 80, tier="archive")
    tm = TieredMemory(store, capacity=10, eviction=ARC())
    hits = 0
    for start in range(0, len(trace), 16):
        hits += len(tm.touch([ids[x - 1] for x in trace[start : start + 16]], now=NOW).hits)
    assert hits == simulate(trace, capacity=10, policy=ARC()).hits


def test_unknown_ids_are_reported_and_known_ones_still_count(store):
    (a,) = add(store, 1)
    tm = TieredMemory(store, capacity=2)
    with pytest.raises(NotFound) as caught:
        tm.touch([a, "no-such-id"], now=NOW)
    assert caught.value.field == "ids" and caught.value.value == ["no-such-id"]
    assert caught.value.result.hits == [a]
    assert store.usage([a])[a].count == 1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"capacity": 0}, "capacity"),
        ({"capacity": "64"}, "capacity"),
        ({"mid_capacity": 0}, "mid_capacity"),
        ({"long_capacity": -5}, "long_capacity"),
        ({"eviction": object()}, "eviction"),
        ({"promotion": LRU()}, "promotion"),
        ({"compactor": object()}, "compactor"),
        ({"heat_threshold": "hot"}, "heat_threshold"),
        ({"summarizer": 3}, "summarizer"),
    ],
)
def test_bad_configuration_names_the_field(store, kwargs, field):
    with pytest.raises(InvalidInput) as caught:
        TieredMemory(store, **kwargs)
    assert caught.value.field == field


def test_bad_ids_change_nothing(store):
    (a,) = add(store, 1)
    tm = TieredMemory(store, capacity=2)
    head = store.head
    for bad in ("a-string", [a, 3], None):
        with pytest.raises(InvalidInput):
            tm.touch(bad)
    assert store.head == head and store.usage([a]) == {}


def test_tenants_never_cross(store):
    mine = add(store, 2, tenant="alpha")
    theirs = add(store, 2, tenant="beta")
    archived_theirs = add(store, 1, tenant="beta", tier="archive")
    tm = TieredMemory(store, capacity=2)
    assert {m.id for m in tm.working(tenant="alpha")} == set(mine)
    with pytest.raises(NotFound):
        tm.touch([mine[0], theirs[0], archived_theirs[0]], tenant="alpha", now=NOW)
    assert store.usage(theirs + archived_theirs) == {}
    assert store.get(archived_theirs[0]).tier == "archive"
    # a page-in in beta's partition never evicts from alpha's
    tm.touch(archived_theirs, now=NOW)
    assert tiers_of(store, mine) == ["short", "short"]
    assert sorted(tiers_of(store, theirs + archived_theirs)).count("archive") == 1
    view = TieredMemory(store.tenant("alpha"), capacity=2)
    assert {m.id for m in view.working()} == set(mine)
    with pytest.raises(NotFound):
        view.touch([theirs[0]])


def test_partitions_are_per_scope(store):
    shared = add(store, 2, scope="shared")
    planner = add(store, 1, scope="planner", tier="archive")
    tm = TieredMemory(store, capacity=2)
    tm.touch(planner, now=NOW)
    assert tiers_of(store, shared) == ["short", "short"]
    assert {m.id for m in tm.working(scopes=["planner"])} == set(planner)
    assert set(tm.stats.partitions) == {("default", "planner")}


def test_a_commit_over_capacity_runs_maintenance_after_it_lands(store):
    tm = TieredMemory(store, capacity=3, eviction=FIFO())
    first = add(store, 3)
    later = add(store, 2)
    assert sorted(tiers_of(store, first + later)).count("archive") == 2
    assert len(tm.working()) == 3
    assert store.head.author == "tiers" and "FIFO" in store.head.message


def test_maintain_order_promote_then_evict_no_longer_holding_first(store):
    tm = TieredMemory(
        store,
        capacity=2,
        eviction=LRU(),
        auto=False,
        promotion=AnyOf(AccessCount(3), KindIn(["decision"])),
    )
    (decision,) = add(store, 1, kind="decision")
    used, stale, fresh, extra = add(store, 4)
    tm.touch([used] * 3 + [fresh, extra], now=NOW)
    with store.commit(message="stale") as tx:
        tx.invalidate(stale)
    result = tm.maintain(now=NOW + timedelta(hours=1))
    assert set(result.promoted) == {decision, used}
    assert result.evicted[0] == stale
    assert store.get(stale).tier == "archive"
    assert [c.author for c in result.commits] == ["tiers", "tiers"]
    assert "promoted" in result.commits[0].message and "AnyOf" in result.commits[0].message
    assert {m.id for m in tm.working()} == {fresh, extra}
    assert tm.stats.total.promotions == 2


def test_maintain_compacts_finished_traces_first(store):
    with store.commit(message="work") as tx:
        trace = tx.begin_trace("fix the build")
        for k in range(3):
            tx.step(trace, f"step {k}")
        tx.finish(trace)
    tm = TieredMemory(store, capacity=10, compactor=Compactor(store), auto=False)
    result = tm.maintain(now=NOW)
    assert result.compacted is not None
    assert any(m.kind == "summary" for m in store.find(tiers=["long"]))


def test_mid_term_segments_heat_up_promote_and_consolidate(store):
    with store.commit(message="traces") as tx:
        hot = tx.begin_trace("hot task")
        hot_steps = [tx.step(hot, f"hot {k}").id for k in range(2)]
        cold = tx.begin_trace("cold task")
        cold_steps = [tx.step(cold, f"cold {k}").id for k in range(2)]
    loose = add(store, 2)
    roomy = TieredMemory(store, capacity=1, mid_capacity=10, heat_threshold=6.0, auto=False)
    roomy.maintain(now=NOW)
    assert [m.id for m in roomy.working()] == [loose[1]]
    assert len(store.find(tiers=["mid"])) == 7
    # three warm hits heat the hot trace's segment past 6: 3 visits + 3 memories + ~1
    assert roomy.touch([hot_steps[0], hot_steps[1], hot_steps[0]], now=NOW).warm_hits
    tight = TieredMemory(store, capacity=1, mid_capacity=3, heat_threshold=6.0, auto=False)
    result = tight.maintain(now=NOW + timedelta(minutes=1))
    assert result.segments_promoted == [hot]
    assert tiers_of(store, [hot, *hot_steps]) == ["long"] * 3
    # cold trace (3) + one loose memory (1) > 3: the coldest segment, the loose one, goes
    assert result.consolidated == [loose[0]]
    assert store.get(loose[0]).tier == "archive"
    assert tiers_of(store, [cold, *cold_steps]) == ["mid"] * 3
    summary = [m for m in store.find(tiers=["long"]) if m.kind == "summary"]
    assert [m.metadata["segment"] for m in summary] == [loose[0]]
    assert "consolidated" in result.commits[-1].message
    assert tight.stats.total.consolidations == 1


def test_long_term_is_trimmed_to_capacity(store):
    ids = add(store, 5, tier="long")
    tm = TieredMemory(store, capacity=10, long_capacity=3, auto=False)
    tm.touch(ids[2:], now=NOW)
    result = tm.maintain(now=NOW)
    assert sorted(result.trimmed) == sorted(ids[:2])
    assert tiers_of(store, ids) == ["archive", "archive", "long", "long", "long"]


def test_stats_and_use_counts_survive_reopening(open_store):
    store = open_store("reopen.db", clock=Clock())
    ids = add(store, 2)
    tm = TieredMemory(store, capacity=4)
    tm.touch(ids + ids[:1], now=NOW)
    store.close()
    again = open_store("reopen.db", clock=Clock())
    tm2 = TieredMemory(again, capacity=4)
    assert tm2.stats.total.hits == 3
    assert again.usage(ids)[ids[0]].count == 2
    assert {m.id for m in tm2.working()} == set(ids)
    again.close()


def test_every_memory_stays_in_exactly_one_tier_after_maintenance(store):
    add(store, 6)
    add(store, 4, tier="archive")
    tm = TieredMemory(store, capacity=3, mid_capacity=2, long_capacity=2, auto=False)
    tm.maintain(now=NOW)
    report = store.check()
    assert report.ok, report.problems
    counts = {
        t: len(store.find(tiers=[t], live=False)) for t in ("short", "mid", "long", "archive")
    }
    assert counts["short"] <= 3 and counts["mid"] <= 2
    assert sum(counts.values()) == len(store.find(live=False))


class Exploding(LRU):
    """An LRU whose victims call fails once: a policy bug in the middle of a touch."""

    armed = True

    def victims(self, candidates, n, now=None):
        if Exploding.armed:
            Exploding.armed = False
            raise RuntimeError("policy bug")
        return super().victims(candidates, n, now)


def test_a_failed_touch_moves_nothing_and_counts_nothing(store):
    resident = add(store, 2)
    (archived,) = add(store, 1, tier="archive")
    Exploding.armed = True  # once per test (each backend)
    tm = TieredMemory(store, capacity=2, eviction=Exploding())
    tm.touch(resident, now=NOW)
    head, stats = store.head, tm.stats.to_json()
    with pytest.raises(RuntimeError):
        tm.touch([archived], now=NOW)
    assert store.head == head and tm.stats.to_json() == stats
    assert store.usage([archived]) == {}  # the uses rolled back with the moves
    assert tiers_of(store, [*resident, archived]) == ["short", "short", "archive"]
    assert tm.touch([archived], now=NOW).paged_in == [archived]
    assert len(tm.working()) == 2


def one_finished_trace(store):
    with store.commit(message="work", now=NOW) as tx:
        trace = tx.begin_trace("Fix the flaky checkout test")
        tx.step(trace, "reran the suite: checkout fails one run in five")
        tx.step(trace, "pinned the clock in the fixture")
        tx.finish(trace)
    return trace


def terse(trace):
    return {"task": trace.root.content, "outcome": trace.status}


@pytest.mark.parametrize("summarizer", [None, terse], ids=["outline", "terse"])
def test_consolidation_and_compaction_store_the_same_readable_summary(open_store, summarizer):
    mid, compacted = open_store("mid.db", clock=Clock()), open_store("compacted.db", clock=Clock())
    one_finished_trace(mid)
    one_finished_trace(compacted)
    extra = {} if summarizer is None else {"summarizer": summarizer}
    tm = TieredMemory(mid, capacity=1, mid_capacity=1, auto=False, **extra)
    assert len(tm.maintain(now=NOW).consolidated) == 1
    Compactor(compacted, **extra).compact(now=NOW)
    (consolidated,) = mid.find(kinds=["summary"])
    (summary,) = compacted.find(kinds=["summary"])
    assert consolidated.content == summary.content
    assert consolidated.content.splitlines()[0] == "Fix the flaky checkout test"
    with pytest.raises(ValueError):
        json.loads(consolidated.content)  # readable text, not the summarizer's JSON
    if summarizer is None:
        assert "- pinned the clock in the fixture" in consolidated.content.splitlines()
        assert consolidated.metadata["summary"]["steps"] == 2
    else:
        assert consolidated.content == "Fix the flaky checkout test\noutcome: finished"
    ids = {"ids"}  # the two stores made their own ids; everything else is the same
    assert {k: v for k, v in consolidated.metadata["summary"].items() if k not in ids} == {
        k: v for k, v in summary.metadata["summary"].items() if k not in ids
    }


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    trace=st.lists(st.integers(0, 9), min_size=1, max_size=30),
    capacity=st.integers(1, 5),
    policy=st.sampled_from([FIFO, LRU, LFU, TwoQueue, ARC, Scored]),
)
def test_working_memory_never_exceeds_capacity_and_hits_match(open_store, trace, capacity, policy):
    store = open_store(f"p-{uuid.uuid4().hex}.db", synchronous="OFF")
    ids = add(store, 10, tier="archive")
    tm = TieredMemory(store, capacity=capacity, eviction=policy())
    hits = 0
    for x in trace:
        hits += len(tm.touch([ids[x]], now=NOW).hits)
        assert len(tm.working()) <= capacity
    assert hits == simulate(trace, capacity=capacity, policy=policy()).hits
    assert store.check().ok
    store.close()


class Crashing:
    """A compactor that dies: maintenance stops there, and nothing is half moved."""

    def compact(self, now=None):
        raise RuntimeError("compactor crashed")


def test_a_crash_during_maintenance_leaves_every_memory_in_one_tier(store):
    ids = add(store, 5)
    tm = TieredMemory(store, capacity=2, compactor=Crashing(), auto=False)
    with pytest.raises(RuntimeError):
        tm.maintain(now=NOW)
    assert tiers_of(store, ids) == ["short"] * 5
    assert store.check().ok
    tm.compactor = None
    tm.maintain(now=NOW)
    assert sorted(tiers_of(store, ids)).count("short") == 2
    assert store.check().ok


@given(burst=st.integers(min_value=1, max_value=20), capacity=st.integers(min_value=1, max_value=5))
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_burst_of_new_memories_never_evicts_a_correction(open_store, burst, capacity):
    store = open_store(f"pinned-{uuid.uuid4().hex}.db", clock=Clock())
    tiers = TieredMemory(store, capacity=capacity, eviction=LRU())
    with store.commit(message="correction", now=NOW) as tx:
        rule = tx.add("Never force-push main.", kind="correction", always=True)
    for n in range(burst):
        with store.commit(message=f"fresh {n}", now=NOW) as tx:
            tx.add(f"fresh memory number {n}")
    assert store.get(rule.id).tier == "short"
    assert rule.id in {m.id for m in tiers.working()}
    others = [m for m in tiers.working() if not m.always]
    assert len(others) <= capacity  # the pinned correction does not take a slot
    tiers.close()
    store.close()
