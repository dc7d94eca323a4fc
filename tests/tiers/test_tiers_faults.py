"""Bad arguments change nothing; tier commits name one tenant; a failed summary is reported."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from memcommit.errors import InvalidInput, NotFound
from memcommit.tiers import LRU
from memcommit.tiers.memory import TieredMemory
from memcommit.tiers.stats import TierStats

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def add(store, n, *, tier="short", scope="shared", tenant="default", now=T):
    with store.commit(message=f"add {n}", now=now) as tx:
        return [tx.add(f"memory {i}", tier=tier, scope=scope, tenant=tenant).id for i in range(n)]


@pytest.fixture
def store(make_store):
    return make_store()


def snapshot(store):
    return store.head_seq, store.usage(), TierStats.read(store).to_json()


BAD_NOW = ["x", datetime(2026, 1, 1), 1234567890, T.date()]


@pytest.mark.parametrize("now", BAD_NOW, ids=repr)
def test_a_bad_now_is_refused_before_any_use_or_move_is_written(store, now):
    short = add(store, 1)
    archived = add(store, 1, tier="archive")
    tm = TieredMemory(store, capacity=1)
    before = snapshot(store)
    for ids in (short, archived, [*short, "unknown"]):
        with pytest.raises(InvalidInput) as caught:
            tm.touch(ids, now=now)
        assert caught.value.field == "now"
    for call in (lambda: tm.working(now=now), lambda: tm.maintain(now=now)):
        with pytest.raises(InvalidInput) as caught:
            call()
        assert caught.value.field == "now"
    assert snapshot(store) == before


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"scopes": b"shared"}, "scopes"),
        ({"scopes": [3]}, "scopes"),
        ({"tenant": 7}, "tenant"),
        ({"tenant": ""}, "tenant"),
    ],
)
def test_working_names_a_bad_argument(store, kwargs, field):
    with pytest.raises(InvalidInput) as caught:
        TieredMemory(store).working(**kwargs)
    assert caught.value.field == field


def test_unknown_ids_are_named_and_the_known_ones_still_count(store):
    short = add(store, 1)
    archived = add(store, 1, tier="archive")
    tm = TieredMemory(store, capacity=2)
    with pytest.raises(NotFound) as caught:
        tm.touch([*short, "nope", *archived], now=T)
    assert caught.value.value == ["nope"]
    assert caught.value.result.hits == short and caught.value.result.paged_in == archived
    assert TierStats.read(store).total.requests == 2


@pytest.mark.parametrize("value", [math.nan, math.inf, -1, -0.5])
def test_heat_threshold_must_be_a_finite_number_of_at_least_zero(store, value):
    with pytest.raises(InvalidInput) as caught:
        TieredMemory(store, heat_threshold=value)
    assert caught.value.field == "heat_threshold"
    assert TieredMemory(store, heat_threshold=0).heat_threshold == 0.0


def test_no_tenant_view_log_names_another_tenants_memories(store):
    ids = {
        tenant: add(store, 3, tenant=tenant, scope=scope)
        for tenant, scope in (("A", "shared"), ("B", "acquisition-of-acme"))
    }
    archived = {t: add(store, 1, tenant=t, tier="archive") for t in ids}
    tm = TieredMemory(store, capacity=1, eviction=LRU(), long_capacity=1, auto=False)
    result = tm.maintain(now=T)
    assert len(result.commits) == 2  # one per tenant
    tm.touch(archived["A"] + archived["B"], now=T)  # pages in for both tenants at once
    with store.commit(message="long", now=T) as tx:
        for tenant in ids:
            for i in ids[tenant][:2]:
                tx.move(i, "long")
    tm.maintain(now=T)
    for tenant, other in (("A", "B"), ("B", "A")):
        theirs = ids[other] + archived[other]
        log = store.tenant(tenant).log()
        tiers_commits = [c for c in log if c.author == "tiers"]
        assert len(tiers_commits) >= 3  # eviction, page-in, trim
        for c in log:
            assert not any(i in c.message for i in theirs), c.message
            assert other not in c.message.split("/")[0].split()  # no other tenant's partition
            assert "acquisition-of-acme" not in c.message or tenant == "B"


def test_a_touch_paging_in_for_two_tenants_makes_one_commit_each(store):
    a = add(store, 1, tenant="A", tier="archive")
    b = add(store, 1, tenant="B", tier="archive")
    result = TieredMemory(store, capacity=2).touch(a + b, now=T)
    assert [c.seq for c in result.commits] == [store.head_seq - 1, store.head_seq]
    assert result.commit == result.commits[-1]
    assert a[0] in result.commits[0].message and b[0] not in result.commits[0].message
    assert "A/shared" not in result.commits[1].message


def test_the_touch_message_is_set_through_the_transaction(store):
    resident = add(store, 1)
    archived = add(store, 1, tier="archive")
    result = TieredMemory(store, capacity=1, eviction=LRU()).touch(archived, now=T)
    message = store.head.message
    assert message == result.commit.message
    assert message.startswith(f"touch: paged in {archived[0]}")
    assert f"evicted {resident[0]} from default/shared to the archive by LRU" in message


def down(trace):
    raise RuntimeError("llm down")


def not_json(trace):
    return {"when": object()}


def empty(trace):
    return {}


def huge(trace):
    return {"text": "x" * 2_000_000}


@pytest.mark.parametrize("summarizer", [down, not_json, empty, huge], ids=lambda f: f.__name__)
def test_a_failing_summarizer_never_makes_the_users_commit_raise(store, summarizer):
    tm = TieredMemory(store, capacity=1, mid_capacity=1, summarizer=summarizer)
    ids = add(store, 4, tenant="A")  # the deferred maintain evicts 3 to mid-term, over 1
    assert sorted(m.tier for m in store.find(tenant="A", live=False)) == [
        "mid",
        "mid",
        "mid",
        "short",
    ]
    add(store, 1, tenant="A", now=T + timedelta(minutes=1))  # later commits land too
    stats = tm.stats.total
    assert stats.consolidations == 0 and stats.consolidation_errors >= 3
    result = tm.maintain(now=T + timedelta(minutes=2))
    assert result.consolidated == [] and len(result.errors) == 4
    assert {e.tenant for e in result.errors} == {"A"} and result.errors[0].reason
    assert all(store.get(i).tier in ("short", "mid") for i in ids)
    assert not [m for m in store.find(tenant="A") if m.kind == "summary"]
    assert store.check().ok


def test_consolidation_works_again_once_the_summarizer_does(store):
    broken = {"down": True}

    def flaky(trace):
        if broken["down"]:
            raise RuntimeError("llm down")
        return {"task": trace.root.content}

    tm = TieredMemory(store, capacity=1, mid_capacity=1, summarizer=flaky, auto=False)
    add(store, 3)  # two go to mid-term, one segment each: both fail to consolidate
    assert len(tm.maintain(now=T).errors) == 2
    broken["down"] = False
    result = tm.maintain(now=T + timedelta(minutes=1))
    assert len(result.consolidated) == 1 and not result.errors
    assert tm.stats.total.consolidations == 1 and tm.stats.total.consolidation_errors == 2


def test_purged_memories_take_no_room_and_are_never_moved(store):
    """A purged memory is a tombstone: maintenance neither counts it against capacity nor
    tries to move it (it raised `Purged` from every commit's maintenance after one)."""
    tm = TieredMemory(store, capacity=3, eviction=LRU())
    ids = add(store, 3)
    with store.commit(message="erase", now=T + timedelta(minutes=1)) as tx:
        for memory_id in ids:
            tx.purge(memory_id)
    later = add(store, 3, now=T + timedelta(minutes=2))
    result = tm.maintain(now=T + timedelta(minutes=3))
    assert result.evicted == []  # three holding memories fit a capacity of three
    assert {m.id for m in store.find(tiers=["short"])} == set(later)
    assert all(store.get(i).status == "purged" for i in ids)
