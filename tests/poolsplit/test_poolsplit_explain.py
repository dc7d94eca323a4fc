"""on_decision: one Decision per entry a pool considers, from the loop that packs."""

from __future__ import annotations

import poolsplit_reference as reference
from hypothesis import given, settings
from poolsplit_strategies import NOW, contexts, entries, pool_lists

from poolsplit import (
    ALWAYS,
    OUTCOMES,
    OVER_BUDGET,
    OVER_RECORD_LIMIT,
    SELECTED,
    Decision,
    Pool,
    default_scorer,
    retrieve,
    retrieve_pools,
)


def entry(id, **fields):
    return {"id": id, "content": "x" * 40, **fields}


def test_outcomes_of_a_small_pool():
    store = [
        entry("rule", scope="always", token_count=500),
        entry("big", base_priority=9, token_count=80),
        entry("fits", base_priority=8),
        entry("also", base_priority=7),
        entry("late", base_priority=6),
        entry("gone", status="archived"),
    ]
    decisions: list[Decision] = []
    selected = retrieve(store, Pool("p", 25, 2), now=NOW, on_decision=decisions.append)
    assert [e["id"] for e in selected] == ["rule", "fits", "also"]
    assert [(d.entry["id"], d.outcome, d.cost) for d in decisions] == [
        ("rule", ALWAYS, 500),
        ("big", OVER_BUDGET, 80),
        ("fits", SELECTED, 10),
        ("also", SELECTED, 10),
        ("late", OVER_RECORD_LIMIT, 10),
    ]
    assert decisions[0].score is None
    assert decisions[1].score == 9.0
    assert [d.index for d in decisions] == [0, 1, 2, 3, 4]
    assert {d.pool for d in decisions} == {"p"}


def test_once_nothing_left_can_fit_the_rest_is_over_budget():
    store = [entry(f"e{n:02d}", base_priority=100 - n, token_count=50) for n in range(60)]
    decisions: list[Decision] = []
    retrieve(store, Pool("p", 120, 100), now=NOW, on_decision=decisions.append)
    assert [d.outcome for d in decisions] == [SELECTED, SELECTED] + [OVER_BUDGET] * 58
    assert [d.entry["id"] for d in decisions] == [e["id"] for e in store]


def test_an_entry_skipped_by_one_pool_can_be_selected_by_a_later_one():
    store = [entry("a", token_count=30), entry("b", token_count=5)]
    decisions: list[Decision] = []
    retrieve_pools(
        store, [Pool("small", 10, 5), Pool("large", 100, 5)], on_decision=decisions.append
    )
    assert [(d.pool, d.entry["id"], d.outcome) for d in decisions] == [
        ("small", "a", OVER_BUDGET),
        ("small", "b", SELECTED),
        ("large", "a", SELECTED),
    ]


@settings(max_examples=200, deadline=None)
@given(entries, pool_lists(), contexts)
def test_decisions_explain_exactly_what_was_packed(store, pools, context):
    decisions: list[Decision] = []
    plain = retrieve_pools(store, pools, context, now=NOW)
    explained = retrieve_pools(store, pools, context, now=NOW, on_decision=decisions.append)
    assert {k: [id(e) for e in v] for k, v in explained.items()} == {
        k: [id(e) for e in v] for k, v in plain.items()
    }

    claimed: set[int] = set()
    for pool in pools:
        mine = [d for d in decisions if d.pool == pool.name]
        candidates = [
            i
            for i, e in enumerate(store)
            if id(e) not in claimed
            and reference.active(e)
            and (pool.types is None or e.get("type", "note") in pool.types)
        ]
        assert sorted(d.index for d in mine) == candidates
        assert all(d.outcome in OUTCOMES and d.entry is store[d.index] for d in mine)
        assert all(d.cost == reference.cost(d.entry, reference.counter) for d in mine)

        always = [d for d in mine if d.outcome == ALWAYS]
        assert mine[: len(always)] == always
        assert all(d.score is None and d.entry.get("scope") == "always" for d in always)

        ranked = mine[len(always) :]
        assert all(d.score == default_scorer(d.entry, context, now=NOW) for d in ranked)
        assert [d.entry for d in mine if d.outcome in (ALWAYS, SELECTED)] == explained[pool.name]
        used = taken = 0
        for d in ranked:
            if d.outcome == SELECTED:
                used, taken = used + d.cost, taken + 1
            elif d.outcome == OVER_BUDGET:
                assert used + d.cost > pool.max_tokens
            else:
                assert d.outcome == OVER_RECORD_LIMIT and taken >= pool.max_entries
        assert used <= pool.max_tokens and taken <= pool.max_entries
        claimed |= {id(e) for e in explained[pool.name]}
