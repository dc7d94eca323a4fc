"""The lazy, paged explanation against poolsplit run over the whole ranking.

Packing hands poolsplit only a prefix of the ranking; the rows of the memories
ranked below it follow poolsplit's own rule. Here poolsplit itself packs every
candidate (the reference) and each row must report exactly its decision.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poolsplit
from memcommit.errors import InvalidInput
from memcommit.model import KINDS as MODEL_KINDS
from memcommit.model import Memory
from memcommit.recall import Row, Tokens, Words, count_words, recall
from memcommit.recall.index.columns import iso_micros, to_micros

NOW = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
VOCAB = ["alpha", "beta", "gamma", "delta", "logs", "pool", "timeout", "the"]
KINDS = ["fact", "event", "procedure", "correction"]
QUERY = "alpha beta logs"


def bank(seed: int, size: int = 400) -> list[Memory]:
    """Many short memories that mostly match QUERY: far more candidates than the prefix."""
    rnd = random.Random(seed)
    return [
        Memory(
            id=f"m{i:04d}",
            content=" ".join(rnd.choices(VOCAB, k=rnd.randint(1, 9))),
            tenant="a",
            kind=rnd.choice(KINDS),
            always=rnd.random() < 0.01,
            created_at=NOW - timedelta(hours=rnd.randint(0, 400)),
            session=rnd.choice(["s1", "s2"]),
        )
        for i in range(size)
    ]


def reference(ctx, pools: list[poolsplit.Pool], counter) -> dict[str, tuple]:
    """poolsplit over every candidate: (outcome, reason, pool, cost, trail) per memory id."""
    candidates = [r for r in ctx.rows if r.stage == "packing"]
    always = sorted(
        (r for r in candidates if r.memory.always),
        key=lambda r: (to_micros(r.memory.created_at, 0), r.memory.id),
    )
    entries = [
        {
            "id": r.memory.id,
            "type": r.memory.kind,
            "scope": "always" if r.memory.always else r.memory.scope,
            "created": iso_micros(to_micros(r.memory.created_at, 0)),
            "score": r.score,
            "content": r.memory.content,
        }
        for r in [*always, *(r for r in candidates if not r.memory.always)]
    ]
    decisions: list[poolsplit.Decision] = []
    poolsplit.retrieve_pools(
        entries,
        pools,
        scorer=lambda entry, context, *, now: entry["score"],
        token_counter=counter,
        is_active=lambda entry: True,
        on_decision=decisions.append,
    )
    trails: dict[str, list] = {}
    final: dict[str, poolsplit.Decision] = {}
    for d in decisions:
        key = d.entry["id"]
        trails.setdefault(key, []).append((d.pool, d.outcome))
        if key not in final or final[key].outcome not in ("selected", "always"):
            final[key] = d
    out = {}
    for key, d in final.items():
        trail = trails[key]
        taken = d.outcome in ("selected", "always")
        if taken:
            kind = d.entry["type"]
            later = pools[[p.name for p in pools].index(d.pool) + 1 :]
            trail += [
                (p.name, "claimed_by_pool") for p in later if p.types is None or kind in p.types
            ]
        out[key] = (
            "selected" if taken else "excluded",
            None if taken else d.outcome,
            d.pool,
            d.cost,
            tuple(trail),
        )
    return out


def packing(row: Row) -> tuple:
    return (row.outcome, row.reason, row.pool, row.cost, row.trail)


CASES = [
    (Words(0), None, None),
    (Words(3), None, None),
    (Words(40), 5, None),
    (Words(400), 300, None),
    (Words(3000), None, None),
    (Words(60), 8, [("f", 20, 3, ("fact",)), ("rest", 40, 5, None)]),
    (Words(90), 9, [("f", 30, 3, ("fact", "event")), ("p", 30, 3, ("procedure",))]),
    (Tokens(70), 12, None),
    (Tokens(70, counter=lambda text: len(text) // 3 + 2), 12, None),  # costs need the text
]


@pytest.mark.parametrize(("budget", "records", "spec"), CASES)
def test_rows_report_what_poolsplit_decides_over_the_whole_ranking(budget, records, spec):
    memories = bank(1)
    pools = None if spec is None else [poolsplit.Pool(*p) for p in spec]
    ctx = recall(
        memories,
        QUERY,
        tenant="a",
        now=NOW,
        scorer="tfidf",
        budget=budget,
        max_records=records,
        pools=pools,
        explain=False,
    )
    used = list(ctx.pools)  # the pools recall packed (an implicit "always" one first, if any)
    if pools is None:
        used_pools = [poolsplit.Pool("context", budget.n, records or sys.maxsize)]
    elif any(p.types is None for p in pools):
        used_pools = pools
    else:  # kinds no pool draws from: their always-scope memories load in a first pool
        drawn = {k for p in pools for k in p.types or ()}
        left = tuple(k for k in MODEL_KINDS if k not in drawn)
        used_pools = [poolsplit.Pool("always", 0, 0, left), *pools]
    assert used == [p.name for p in used_pools]
    expected = reference(ctx, used_pools, budget.counter)
    rows = {r.memory.id: r for r in ctx.rows if r.stage == "packing"}
    assert len(rows) > 128  # more candidates than poolsplit is first handed
    assert {k: packing(r) for k, r in rows.items()} == expected


def test_pages_and_counts_agree_with_every_row():
    ctx = recall(
        bank(2),
        QUERY,
        tenant="a",
        now=NOW,
        scorer="tfidf",
        budget=Words(30),
        explain=False,
        kinds=["fact", "event", "correction"],
        session="s1",
        include_previous_sessions=False,
    )
    every = ctx.rows
    explanation = ctx.explanation
    ids = [r.memory.id for r in every]
    assert len(explanation) == len(every) == 400
    for outcome, wanted in (
        ("all", ids),
        ("selected", [r.memory.id for r in every if r.outcome == "selected"]),
        ("excluded", [r.memory.id for r in every if r.outcome == "excluded"]),
    ):
        assert explanation.total(outcome) == len(wanted)
        for offset, limit in ((0, 7), (3, 50), (390, 100), (len(wanted), 5)):
            page = explanation.page(offset, limit, outcome=outcome)
            assert [r.memory.id for r in page] == wanted[offset : offset + limit]
    counts = explanation.counts()
    assert counts.selected == len(ctx.selected) and counts.rows == len(every)
    assert counts.reasons == dict(Counter(r.reason for r in every if r.reason))
    assert counts.stages == dict(Counter(r.stage for r in every))
    for kw, field in (
        ({"outcome": "maybe"}, "outcome"),
        ({"offset": -1}, "offset"),
        ({"limit": -5}, "limit"),
    ):
        with pytest.raises(InvalidInput) as err:
            explanation.page(**kw)
        assert err.value.field == field


def test_rows_are_in_table_order():
    ctx = recall(bank(3), QUERY, tenant="a", now=NOW, scorer="tfidf", budget=Words(25))
    chosen = [r for r in ctx.rows if r.outcome == "selected"]
    assert [r.memory.id for r in chosen] == [m.id for m in ctx.selected]
    rest = ctx.rows[len(chosen) :]

    def key(r: Row) -> tuple:
        score = -r.score if r.score is not None else float("inf")
        return (score, r.memory.created_at, r.memory.id)

    assert rest == sorted(rest, key=key)


fast = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@fast
@given(
    st.integers(0, 10_000),
    st.integers(0, 200),
    st.one_of(st.none(), st.integers(0, 40)),
    st.sampled_from([0.0, 0.5]),
)
def test_lazy_pages_equal_eager_rows(seed, words, records, weight):
    memories = bank(seed, size=300)
    kw = dict(tenant="a", now=NOW, budget=Words(words), max_records=records, recency_weight=weight)
    eager = recall(memories, QUERY, explain=True, **kw)
    lazy = recall(memories, QUERY, explain=False, **kw)
    assert lazy.explanation.page(0, 40) == eager.rows[:40]
    assert lazy.rows == eager.rows
    pool = poolsplit.Pool("context", words, sys.maxsize if records is None else records)
    expected = reference(eager, [pool], count_words)
    assert {r.memory.id: packing(r) for r in eager.rows if r.stage == "packing"} == expected
