"""poolsplit against a literal reading of the spec: identical selections on random stores."""

from __future__ import annotations

import random
from datetime import timedelta

import poolsplit_reference as reference
import pytest
from hypothesis import given, settings
from poolsplit_strategies import NOW, TYPES, contexts, entries, pool_lists

from poolsplit import Pool, default_scorer, retrieve, retrieve_pools


def identities(result):
    return {name: [id(e) for e in chosen] for name, chosen in result.items()}


@settings(max_examples=300, deadline=None)
@given(entries, pool_lists(), contexts)
def test_retrieve_pools_matches_the_reference(store, pools, context):
    ours = retrieve_pools(store, pools, context, now=NOW)
    theirs = reference.retrieve_pools(store, pools, context, now=NOW)
    assert identities(ours) == identities(theirs)


@settings(max_examples=100, deadline=None)
@given(entries, pool_lists(max_pools=1), contexts)
def test_retrieve_matches_the_reference(store, pools, context):
    ours = retrieve(store, pools[0], context, now=NOW)
    theirs = reference.retrieve(store, pools[0], context, now=NOW)
    assert [id(e) for e in ours] == [id(e) for e in theirs]


@settings(max_examples=100, deadline=None)
@given(entries, pool_lists(), contexts)
def test_default_scorer_matches_the_reference_exactly(store, pools, context):
    for entry in store:
        assert default_scorer(entry, context, now=NOW) == reference.score(entry, context, now=NOW)


@settings(max_examples=100, deadline=None)
@given(entries, pool_lists(), contexts)
def test_plugged_scorer_and_counter_match_the_reference(store, pools, context):
    def scorer(entry, context, *, now):
        return len(entry.get("tags") or ()) - (entry.get("base_priority", 5) > 4)

    def counter(text):
        return len(text.split())  # may be 0: plugged counters are trusted

    ours = retrieve_pools(store, pools, context, scorer=scorer, token_counter=counter)
    theirs = reference.retrieve_pools(store, pools, context, scorer=scorer, token_counter=counter)
    assert identities(ours) == identities(theirs)


def big_store(rng: random.Random, size: int) -> list[dict]:
    """Realistic stores: long runs of skips, many ties, messages that overlap content."""
    words = [f"w{n}" for n in range(60)] + ["the", "deploy", "api"]
    store = []
    for _ in range(size):
        entry = {
            "id": f"m{rng.randrange(size)}",
            "content": " ".join(rng.choices(words, k=rng.randint(1, 40))),
            "created": (NOW - timedelta(hours=rng.randrange(24 * 120))).isoformat(),
            "tags": rng.sample("abcdef", rng.randint(0, 3)),
            "project": rng.choice(["api", "web", None]),
            "base_priority": rng.choice([1, 3, 5, 7]),
        }
        if rng.random() < 0.9:
            entry["type"] = rng.choice(TYPES)
        if rng.random() < 0.03:
            entry["scope"] = "always"
        if rng.random() < 0.05:
            entry["status"] = "archived"
        if rng.random() < 0.3:
            entry["token_count"] = rng.randint(1, 60)
        store.append(entry)
        if rng.random() < 0.01:
            store.append(entry)  # the same object twice
    return store


@pytest.mark.parametrize("seed", range(12))
def test_large_random_stores_match_the_reference(seed):
    rng = random.Random(seed)
    store = big_store(rng, 1500)
    pools = [
        Pool("tight", rng.randint(0, 40), 1000, (rng.choice(TYPES),)),
        Pool("capped", 10_000, rng.randint(0, 20), (rng.choice(TYPES), rng.choice(TYPES))),
        Pool("both", rng.randint(50, 400), rng.randint(1, 30), None),
        Pool("rest", 100_000, 100_000),
    ]
    message = " ".join(rng.choices([f"w{n}" for n in range(60)], k=rng.randint(0, 12)))
    context = {"message": message, "tags": ["a", "b"], "project": "api"}
    ours = retrieve_pools(store, pools, context, now=NOW)
    theirs = reference.retrieve_pools(store, pools, context, now=NOW)
    assert identities(ours) == identities(theirs)
