"""hypothesis properties: the invariants poolsplit promises, on random stores and pools."""

from __future__ import annotations

import copy
import dataclasses

import poolsplit_reference as reference
from hypothesis import given, settings
from hypothesis import strategies as st
from poolsplit_strategies import NOW, contexts, entries, pool_lists

from poolsplit import default_scorer, retrieve, retrieve_pools

SETTINGS = settings(max_examples=150, deadline=None)


def of_types(entry, pool):
    return pool.types is None or entry.get("type", "note") in pool.types


def always(entry):
    return entry.get("scope") == "always"


@SETTINGS
@given(entries, pool_lists(max_pools=1), contexts)
def test_every_active_always_entry_of_the_pool_types_loads_whatever_the_budgets(
    store, pools, context
):
    (pool,) = pools
    selected = retrieve(store, pool, context, now=NOW)
    expected = [e for e in store if reference.active(e) and of_types(e, pool) and always(e)]
    assert selected[: len(expected)] == expected
    assert all(a is b for a, b in zip(selected, expected, strict=False))


@SETTINGS
@given(entries, pool_lists(), contexts)
def test_always_entries_land_in_the_first_pool_of_their_type(store, pools, context):
    result = retrieve_pools(store, pools, context, now=NOW)
    for entry in store:
        if not (reference.active(entry) and always(entry)):
            continue
        first = next((p.name for p in pools if of_types(entry, p)), None)
        if first is not None:
            assert any(e is entry for e in result[first])


@SETTINGS
@given(entries, pool_lists(), contexts)
def test_contextual_cost_and_count_stay_within_the_caps(store, pools, context):
    result = retrieve_pools(store, pools, context, now=NOW)
    for pool in pools:
        contextual = [e for e in result[pool.name] if not always(e)]
        assert len(contextual) <= pool.max_entries
        assert sum(reference.cost(e, reference.counter) for e in contextual) <= pool.max_tokens


@SETTINGS
@given(entries, pool_lists(), contexts, st.randoms(use_true_random=False))
def test_shuffling_changes_nothing_when_ids_leave_no_ties(store, pools, context, rng):
    for n, entry in enumerate(store):
        entry["id"] = f"e{n:03d}"
    shuffled = list(store)
    rng.shuffle(shuffled)
    before = retrieve_pools(store, pools, context, now=NOW)
    after = retrieve_pools(shuffled, pools, context, now=NOW)
    for pool in pools:
        first, second = before[pool.name], after[pool.name]
        assert [e for e in first if not always(e)] == [e for e in second if not always(e)]
        always_in_shuffled_order = [e for e in shuffled if any(e is x for x in first) and always(e)]
        assert [e for e in second if always(e)] == always_in_shuffled_order


@SETTINGS
@given(pool_lists(max_pools=1), contexts, st.randoms(use_true_random=False))
def test_full_ties_are_broken_by_input_order(pools, context, rng):
    pool = dataclasses.replace(pools[0], types=None)
    twins = [{"content": "same words"} for _ in range(5)]  # 2 tokens each
    rng.shuffle(twins)
    picked = retrieve(twins, pool, context, now=NOW)
    expected = twins[: min(pool.max_entries, pool.max_tokens // 2)]
    assert len(picked) == len(expected)
    assert all(a is b for a, b in zip(picked, expected, strict=True))


@SETTINGS
@given(entries, pool_lists(), contexts)
def test_entries_are_never_mutated_and_the_same_objects_come_back(store, pools, context):
    snapshot = copy.deepcopy(store)
    result = retrieve_pools(store, pools, context, now=NOW)
    assert store == snapshot
    identities = {id(e) for e in store}
    assert all(id(e) in identities for chosen in result.values() for e in chosen)


@SETTINGS
@given(entries, pool_lists(), contexts)
def test_each_entry_lands_in_at_most_one_pool(store, pools, context):
    result = retrieve_pools(store, pools, context, now=NOW)
    placed = [id(e) for chosen in result.values() for e in chosen]
    assert len(placed) == len(set(placed))


@SETTINGS
@given(entries, pool_lists(), contexts)
def test_greedy_skip_and_continue_is_exact(store, pools, context):
    """Every contextual candidate, in rank order, was taken iff there was room at its turn."""
    result = retrieve_pools(store, pools, context, now=NOW)
    claimed: set[int] = set()
    for pool in pools:
        chosen = {id(e) for e in result[pool.name]}
        candidates = [
            e
            for e in store
            if id(e) not in claimed and reference.active(e) and of_types(e, pool) and not always(e)
        ]
        ranked = sorted(
            range(len(candidates)),
            key=lambda i: (
                -default_scorer(candidates[i], context, now=NOW),
                candidates[i].get("created") or "",
                candidates[i].get("id") or "",
                i,
            ),
        )
        used = taken = 0
        for i in ranked:
            entry = candidates[i]
            cost = reference.cost(entry, reference.counter)
            room = taken < pool.max_entries and used + cost <= pool.max_tokens
            assert (id(entry) in chosen) == room
            if room:
                used += cost
                taken += 1
        claimed |= chosen
