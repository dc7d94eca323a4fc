"""A policy made with a bad parameter is refused when it is made, with the field and the value.

Unchecked, a string ratio failed with ValueError inside a later maintenance, a
NaN or infinite weight made every score NaN (an arbitrary eviction order), and a
kind the store does not know selected nothing, silently.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from memcommit.errors import InvalidInput
from memcommit.tiers import TTL, Forgetting, KindIn, Learned, Scored, TwoQueue
from memcommit.tiers.memory import TieredMemory

NAN, INF = math.nan, math.inf
HOUR = timedelta(hours=1)
T = datetime(2026, 1, 1, tzinfo=timezone.utc)

BAD = [
    ("in_ratio", "a", lambda v: TwoQueue(in_ratio=v)),
    ("in_ratio", -1, lambda v: TwoQueue(in_ratio=v)),
    ("in_ratio", 2.0, lambda v: TwoQueue(in_ratio=v)),
    ("in_ratio", NAN, lambda v: TwoQueue(in_ratio=v)),
    ("out_ratio", "b", lambda v: TwoQueue(out_ratio=v)),
    ("out_ratio", INF, lambda v: TwoQueue(out_ratio=v)),
    ("out_ratio", -0.5, lambda v: TwoQueue(out_ratio=v)),
    ("recency", NAN, lambda v: Scored(recency=v)),
    ("recency", INF, lambda v: Scored(recency=v)),
    ("importance", -INF, lambda v: Scored(importance=v)),
    ("frequency", "1", lambda v: Scored(frequency=v)),
    ("scale", INF, lambda v: Forgetting(v)),
    ("scale", True, lambda v: Forgetting(v)),
    ("scale", 10**400, lambda v: Forgetting(v)),
    ("learning_rate", INF, lambda v: Learned(learning_rate=v)),
    ("learning_rate", NAN, lambda v: Learned(learning_rate=v)),
    ("kinds", None, KindIn),
    ("kinds", [1], KindIn),
    ("kinds", ["bogus"], KindIn),
    ("kinds", [], KindIn),
    ("ttl", {"bogus": HOUR}, TTL),
    ("ttl", {1: HOUR}, TTL),
]


@pytest.mark.parametrize(("field", "value", "make"), BAD, ids=[f"{f}={v!r}" for f, v, _ in BAD])
def test_a_bad_parameter_is_refused_naming_the_field_and_value(field, value, make):
    with pytest.raises(InvalidInput) as caught:
        make(value)
    assert caught.value.field == field
    assert caught.value.value is value
    assert caught.value.reason


def test_good_parameters_are_kept_as_numbers_and_kinds():
    queue = TwoQueue(in_ratio=0, out_ratio=3)
    assert (queue.in_ratio, queue.out_ratio) == (0.0, 3.0)
    assert TwoQueue(in_ratio=1).in_ratio == 1.0
    assert Scored(recency=0, importance=2, frequency=0.5).importance == 2.0
    assert Forgetting(8).scale == 8.0
    assert Learned(learning_rate=1).learning_rate == 1.0
    assert KindIn(("fact", "decision")).kinds == {"fact", "decision"}
    assert TTL({}).ttl == {}
    assert TTL({"event": HOUR}).ttl == {"event": HOUR}


def test_a_refused_policy_leaves_the_store_as_it_was(make_store):
    store = make_store()
    with store.commit(message="three", now=T) as tx:
        for i in range(3):
            tx.add(f"memory {i}")
    head = store.head_seq
    with pytest.raises(InvalidInput):
        TieredMemory(store, capacity=1, eviction=TwoQueue(in_ratio="a"))
    with pytest.raises(InvalidInput):
        TieredMemory(store, capacity=1, promotion=KindIn([1]))
    assert store.head_seq == head
    assert {m.tier for m in store.find()} == {"short"}
