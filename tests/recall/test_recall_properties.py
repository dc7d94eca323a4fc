"""Invariants under random banks: determinism, tenant isolation, always-scope, explanation."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcommit
import poolsplit
from memcommit.model import Memory
from memcommit.recall import Words, recall

NOW = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
VOCAB = ["alpha", "beta", "gamma", "database", "timeout", "logs", "pool", "the", "a", "hiking"]
KINDS = ["fact", "event", "procedure", "working", "correction"]

texts = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=8).map(" ".join)
memory_specs = st.lists(
    st.tuples(
        texts,
        st.sampled_from(KINDS),
        st.integers(0, 6),
        st.booleans(),
        st.sampled_from([None, "k1", "k2"]),
    ),
    min_size=1,
    max_size=14,
)
queries = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=4).map(" ".join)
options = st.fixed_dictionaries(
    {
        "budget": st.one_of(st.none(), st.integers(0, 30).map(Words)),
        "max_records": st.one_of(st.none(), st.integers(0, 5)),
        "recency_weight": st.sampled_from([0.0, 0.5, 1.0]),
        "latest_per_key": st.booleans(),
        "scorer": st.sampled_from(["tfidf", "memory"]),
    }
)
fast = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def memories(specs, tenant="a", prefix="m"):
    return [
        Memory(
            id=f"{prefix}{i}",
            content=text,
            kind=kind,
            tenant=tenant,
            key=key,
            session=("s1", "s2", None)[i % 3],
            always=(kind == "correction" and always),
            created_at=NOW - timedelta(hours=age),
            created_commit=i + 1,
        )
        for i, (text, kind, age, always, key) in enumerate(specs)
    ]


def outcome(ctx):
    return (
        [m.id for m in ctx.selected],
        [(r.memory.id, r.stage, r.cosine, r.score, r.outcome, r.reason, r.cost) for r in ctx.rows],
    )


@fast
@given(memory_specs, queries, options, st.randoms(use_true_random=False))
def test_shuffled_insertion_order_gives_the_same_context(specs, query, opts, rnd):
    bank = memories(specs)
    shuffled = bank[:]
    rnd.shuffle(shuffled)
    first = recall(bank, query, tenant="a", now=NOW, **opts)
    second = recall(shuffled, query, tenant="a", now=NOW, **opts)
    assert outcome(first) == outcome(second)


@fast
@given(memory_specs, memory_specs, queries, options)
def test_no_row_of_another_tenant_and_no_leak_through_scores(specs_a, specs_b, query, opts):
    store = memcommit.open(":memory:")
    try:
        with store.commit(message="a", now=NOW) as tx:
            for m in memories(specs_a):
                tx.add(m.content, id=m.id, tenant="a", kind=m.kind, key=m.key, always=m.always)
        before = recall(store, query, tenant="a", now=NOW, **opts)
        with store.commit(message="b", now=NOW) as tx:
            for m in memories(specs_b, prefix="b"):
                tx.add(m.content, id=m.id, tenant="b", kind=m.kind, key=m.key, always=m.always)
        after = recall(store, query, tenant="a", now=NOW, **opts)
        assert {r.memory.tenant for r in after.rows} <= {"a"}
        assert outcome(before) == outcome(after)
        other = recall(store, query, tenant="b", now=NOW, **opts)
        assert {r.memory.tenant for r in other.rows} <= {"b"}
    finally:
        store.close()


@fast
@given(memory_specs, queries, options)
def test_always_memories_that_pass_the_filters_are_always_selected(specs, query, opts):
    bank = [
        *memories(specs),
        Memory(
            id="always",
            content="never skip the review",
            kind="correction",
            tenant="a",
            always=True,
            created_at=NOW - timedelta(days=400),
        ),
    ]
    ctx = recall(bank, query, tenant="a", now=NOW, **opts)
    assert "always" in [m.id for m in ctx.selected]
    assert ctx.selected[0].always


pool_sets = st.sampled_from(
    [
        [poolsplit.Pool("facts", 10, 2, ("fact",))],
        [poolsplit.Pool("events", 10, 2, ("event", "procedure")), poolsplit.Pool("f", 5, 1)],
        [poolsplit.Pool("working", 0, 0, ("working",))],
    ]
)


@fast
@given(memory_specs, queries, pool_sets, st.sampled_from(["tfidf", "memory"]))
def test_always_memories_load_whatever_kinds_the_pools_draw(specs, query, pools, scorer):
    always = Memory(
        id="always",
        content="never skip the review",
        kind="correction",
        tenant="a",
        always=True,
        created_at=NOW - timedelta(days=400),
    )
    ctx = recall([*memories(specs), always], query, tenant="a", now=NOW, pools=pools, scorer=scorer)
    assert sum(m.id == "always" for m in ctx.selected) == 1
    assert any(chosen and chosen[0].id == "always" for chosen in ctx.pools.values())


@fast
@given(memory_specs, queries, options)
def test_rows_explain_exactly_the_packed_result(specs, query, opts):
    bank = memories(specs)
    eager = recall(bank, query, tenant="a", now=NOW, explain=True, **opts)
    lazy = recall(bank, query, tenant="a", now=NOW, explain=False, **opts)
    assert [m.id for m in lazy.selected] == [m.id for m in eager.selected]
    assert outcome(lazy) == outcome(eager)
    chosen = [r.memory.id for r in eager.rows if r.outcome == "selected"]
    assert chosen == [m.id for m in eager.selected]
    assert len(eager.rows) == len(bank)
    if opts["budget"] is not None:
        spent = sum(r.cost for r in eager.rows if r.outcome == "selected" and not r.memory.always)
        assert spent <= opts["budget"].n
    if opts["max_records"] is not None:
        assert sum(1 for m in eager.selected if not m.always) <= opts["max_records"]


def test_large_candidate_sets_pack_like_the_full_list():
    """The fast path hands poolsplit a prefix; it must select what the full list selects."""
    rnd = random.Random(3)
    bank = [
        Memory(
            id=f"m{i:04d}",
            content=" ".join(rnd.choices(VOCAB, k=rnd.randint(1, 12))),
            tenant="a",
            created_at=NOW - timedelta(hours=rnd.randint(0, 99)),
        )
        for i in range(1500)
    ]
    for n in (0, 3, 50, 400, 4000):
        for records in (None, 7, 300):
            fast_ctx = recall(
                bank,
                "alpha logs pool",
                tenant="a",
                now=NOW,
                budget=Words(n),
                max_records=records,
                explain=False,
            )
            full_ctx = recall(
                bank,
                "alpha logs pool",
                tenant="a",
                now=NOW,
                budget=Words(n),
                max_records=records,
                explain=True,
            )
            assert [m.id for m in fast_ctx.selected] == [m.id for m in full_ctx.selected]
