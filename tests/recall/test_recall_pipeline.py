"""recall() over real stores: incremental index, isolation, explanation, pools, bad input."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from recall_bank import Q_INCIDENT, Q_PROCEDURE, build_bank, row, selected

import memcommit
import poolsplit
from memcommit.errors import InvalidInput, ScorerError
from memcommit.recall import Context, Hybrid, Tokens, Words, recall
from memcommit.recall.index.live import store_index
from memcommit.store.store import backing_store


def test_store_recall_delegates(bank, now):
    ctx = bank.recall(Q_INCIDENT, tenant="team-a", now=now, scorer="tfidf")
    assert isinstance(ctx, Context) and selected(ctx)[0] == "M3"


def test_top_level_exports():
    assert memcommit.recall is recall and memcommit.Words is Words and memcommit.Tokens is Tokens


def test_tenant_view_recalls_its_own_tenant(bank, now):
    view = bank.tenant("team-b")
    ctx = recall(view, Q_INCIDENT, now=now)
    assert {r.memory.tenant for r in ctx.rows} == {"team-b"}
    with pytest.raises(InvalidInput) as err:
        recall(view, Q_INCIDENT, tenant="team-a", now=now)
    assert err.value.field == "tenant"


def test_commits_update_the_index_without_rebuild(bank, now):
    first = recall(bank, "gravel bicycle", tenant="team-a", now=now)
    assert first.selected == []
    with bank.commit(message="new", now=now) as tx:
        tx.add("Bought a gravel bicycle for the commute.", id="N1", tenant="team-a")
    assert selected(recall(bank, "gravel bicycle", tenant="team-a", now=now)) == ["N1"]
    with bank.commit(message="edit", now=now) as tx:
        tx.update("N1", content="Sold the road bike.")
    assert recall(bank, "gravel bicycle", tenant="team-a", now=now).selected == []
    assert selected(recall(bank, "road bike", tenant="team-a", now=now)) == ["N1"]
    with bank.commit(message="purge", now=now) as tx:
        tx.purge("N1")
    ctx = recall(bank, "road bike", tenant="team-a", now=now)
    assert "N1" not in {r.memory.id for r in ctx.rows}


def test_index_matches_a_fresh_one_after_commits(bank, now, make_store):
    recall(bank, "x", tenant="team-a", now=now)  # index built here, then kept current
    with bank.commit(message="more", now=now) as tx:
        tx.add("Database pool resized to 50 connections.", id="N2", tenant="team-a")
        tx.invalidate("M1")
        tx.archive("M4")
    every = {"tenant": "team-a", "now": now, "scorer": "tfidf", "latest_per_key": False}
    live = recall(bank, Q_PROCEDURE, **every)
    reopened = make_store("bank.db")  # a new store object: its index is built from scratch
    fresh = recall(reopened, Q_PROCEDURE, **every)
    assert [(r.memory.id, r.cosine, r.score, r.reason) for r in live.rows] == [
        (r.memory.id, r.cosine, r.score, r.reason) for r in fresh.rows
    ]
    assert row(live, "M1").reason == "no_longer_holds"
    assert row(live, "M4").reason == "archived"
    reopened.close()


def test_recall_never_touches(bank, now):
    before = bank.usage()
    head = bank.head
    recall(bank, Q_INCIDENT, tenant="team-a", now=now, explain=True)
    assert bank.usage() == before
    assert bank.head == head


def test_as_of_reads_an_earlier_commit(bank, now):
    seq = bank.head.seq
    with bank.commit(message="later", now=now) as tx:
        tx.add("Incident database timeout postmortem written.", id="N3", tenant="team-a")
    old = recall(bank, Q_INCIDENT, tenant="team-a", now=now, as_of=seq)
    assert "N3" not in {r.memory.id for r in old.rows}
    assert "N3" in {r.memory.id for r in recall(bank, Q_INCIDENT, tenant="team-a", now=now).rows}


def test_explanation_equals_the_packed_result(seed):
    for n in (0, 9, 10, 11, 21, 40):
        for explain in (True, False):
            ctx = seed(Q_INCIDENT, budget=Words(n), explain=explain)
            chosen = [r.memory.id for r in ctx.rows if r.outcome == "selected"]
            assert chosen == selected(ctx)
            for name, used in ctx.used.items():
                assert used == sum(
                    r.cost for r in ctx.rows if r.pool == name and r.outcome == "selected"
                )


def test_lazy_rows_describe_the_recall_not_later_commits(bank, now):
    lazy = recall(bank, Q_INCIDENT, tenant="team-a", now=now, explain=False, scorer="tfidf")
    eager = recall(bank, Q_INCIDENT, tenant="team-a", now=now, explain=True, scorer="tfidf")
    with bank.commit(message="meanwhile", now=now) as tx:
        for i in range(50):
            tx.add(f"database timeout incident {i}", tenant="team-a", kind="event")
        tx.invalidate("M3")
    store_index(bank).index("team-a").merge()  # renumbers documents
    assert [(r.memory.id, r.reason, r.score) for r in lazy.rows] == [
        (r.memory.id, r.reason, r.score) for r in eager.rows
    ]


def test_unknown_tenant_is_an_empty_context_with_a_reason(seed):
    ctx = seed(Q_INCIDENT, tenant="nobody")
    assert ctx.selected == [] and ctx.rows == [] and "unknown tenant" in ctx.note


def test_empty_query_matches_nothing_and_says_so(seed):
    ctx = seed("")
    assert ctx.selected == []
    assert {r.reason for r in ctx.rows if r.stage != "filters"} == {"no_lexical_match"}


def test_always_memories_load_first_and_bypass_caps(bank, now):
    with bank.commit(message="correction", now=now) as tx:
        tx.add(
            "Never restart the primary during business hours.",
            id="C1",
            tenant="team-a",
            kind="correction",
            always=True,
        )
    with bank.commit(message="flood", now=now) as tx:
        for i in range(50):
            tx.add(f"database timeout incident number {i}", tenant="team-a", kind="event")
    for budget in (Words(0), Words(5), Words(500)):
        for records in (0, 1, 100):
            ctx = recall(
                bank, Q_INCIDENT, tenant="team-a", now=now, budget=budget, max_records=records
            )
            assert selected(ctx)[0] == "C1"
            assert row(ctx, "C1").outcome == "selected"


def test_pools_reserve_budget_per_kind(seed):
    pools = [
        poolsplit.Pool("procedures", 11, 1, ("procedure",)),
        poolsplit.Pool("rest", 40, 5, None),
    ]
    ctx = seed(Q_PROCEDURE, pools=pools, budget=Words(51))
    assert [m.id for m in ctx.pools["procedures"]] == ["M4"]
    assert all(m.id != "M4" for m in ctx.pools["rest"])
    assert ("rest", "claimed_by_pool") in row(ctx, "M4").trail
    assert ctx.used["procedures"] == 11


def test_pools_cannot_reserve_more_than_the_budget(seed):
    with pytest.raises(InvalidInput) as err:
        seed(Q_PROCEDURE, pools=[poolsplit.Pool("p", 50, 3)], budget=Words(10))
    assert err.value.field == "pools"


def test_kinds_no_pool_draws_are_filtered(seed):
    ctx = seed(Q_PROCEDURE, pools=[poolsplit.Pool("p", 100, 5, ("procedure",))])
    assert row(ctx, "M3").reason == "other_kind"


def _correction(store, now, *, id="C1", always=True):
    with store.commit(message="correction", now=now) as tx:
        tx.add(
            "Never restart the primary during business hours.",
            id=id,
            tenant="team-a",
            kind="correction",
            always=always,
        )


def test_always_memories_load_even_when_no_pool_draws_their_kind(bank, seed, now):
    _correction(bank, now)
    _correction(bank, now, id="C2", always=False)
    pools = [poolsplit.Pool("procedures", 11, 1, ("procedure",))]
    ctx = seed(Q_PROCEDURE, pools=pools)
    assert list(ctx.pools) == ["always", "procedures"]
    assert [m.id for m in ctx.pools["always"]] == ["C1"] and selected(ctx)[0] == "C1"
    assert row(ctx, "C1").outcome == "selected" and row(ctx, "C1").pool == "always"
    assert ctx.used["always"] == 7  # outside every cap; the caller's pool keeps its room
    assert [m.id for m in ctx.pools["procedures"]] == ["M4"]
    assert row(ctx, "C2").reason == "other_kind"  # a contextual correction: no pool draws it
    # a pool that draws corrections loads it itself; "always" is there when kinds are left out
    ctx = seed(Q_PROCEDURE, pools=[poolsplit.Pool("all", 11, 1)])
    assert list(ctx.pools) == ["all"] and ctx.pools["all"][0].id == "C1"
    ctx = seed(Q_PROCEDURE, pools=[poolsplit.Pool("p", 11, 1, ("procedure", "correction"))])
    assert list(ctx.pools) == ["always", "p"] and ctx.pools["always"] == []
    assert [m.id for m in ctx.pools["p"]] == ["C1", "M4"]


def test_the_kinds_filter_still_applies_to_always_memories(bank, seed, now):
    _correction(bank, now)
    ctx = seed(Q_PROCEDURE, kinds=["procedure"], pools=[poolsplit.Pool("p", 11, 1)])
    assert row(ctx, "C1").reason == "other_kind" and "C1" not in selected(ctx)
    # filters other than the pools' kinds still apply: a correction of another session
    procedures = [poolsplit.Pool("p", 11, 1, ("procedure",))]
    ctx = seed(Q_PROCEDURE, session="s9", include_previous_sessions=False, pools=procedures)
    assert row(ctx, "C1").reason == "previous_session"


def test_a_pool_named_always_is_refused_when_the_implicit_one_is_needed(seed):
    with pytest.raises(InvalidInput) as err:
        seed(Q_PROCEDURE, pools=[poolsplit.Pool("always", 11, 1, ("procedure",))])
    assert err.value.field == "pools"
    ctx = seed(Q_PROCEDURE, pools=[poolsplit.Pool("always", 11, 1)])  # draws every kind
    assert list(ctx.pools) == ["always"]


def test_views_of_one_store_share_one_index(bank, now):
    index = store_index(bank)
    assert store_index(bank.tenant("team-a")) is index is store_index(bank.tenant("team-b"))
    assert backing_store(bank.tenant("team-a")) is bank
    recall(bank.tenant("team-a"), Q_INCIDENT, now=now)
    recall(bank.tenant("team-b"), Q_INCIDENT, now=now)
    assert set(index.tenants) == {"team-a", "team-b"}
    with bank.commit(message="new", now=now) as tx:
        tx.add("database timeout seen in staging", id="N9", tenant="team-b")
    view_rows = recall(bank.tenant("team-b"), Q_INCIDENT, now=now).rows
    assert "N9" in {r.memory.id for r in view_rows}
    assert {r.memory.tenant for r in view_rows} == {"team-b"}


def test_find_reads_many_ids_at_once(bank):
    found = bank.find(ids=["M2", "M6", "nope"], live=False)
    assert [m.id for m in found] == ["M2", "M6"]
    assert [m.id for m in bank.tenant("team-a").find(ids=["M2", "M6"])] == ["M2"]


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"budget": 10}, "budget"),
        ({"max_records": -1}, "max_records"),
        ({"recency_weight": 1.5}, "recency_weight"),
        ({"recency_weight": float("nan")}, "recency_weight"),
        ({"half_life": timedelta(0)}, "half_life"),
        ({"kinds": ["gossip"]}, "kinds"),
        ({"tiers": ["attic"]}, "tiers"),
        ({"max_age": timedelta(hours=-1)}, "max_age"),
        ({"include_previous_sessions": False}, "include_previous_sessions"),
        ({"scorer": "magic"}, "scorer"),
        ({"now": "yesterday"}, "now"),
        ({"tenant": ""}, "tenant"),
    ],
)
def test_bad_input_names_the_field(seed, kw, field):
    with pytest.raises(InvalidInput) as err:
        seed(Q_INCIDENT, **kw)
    assert err.value.field == field


def test_negative_budgets_are_rejected():
    for make in (Words, Tokens):
        with pytest.raises(InvalidInput) as err:
            make(-1)
        assert err.value.field == "budget"


def test_a_failing_scorer_names_the_memory_and_changes_nothing(bank, seed):
    head = bank.head

    def nan(memory, query):
        return math.nan if memory.id == "M3" else 1.0

    def boom(memory, query):
        raise RuntimeError("model offline")

    for scorer in (nan, boom):
        with pytest.raises(ScorerError) as err:
            seed(Q_INCIDENT, scorer=scorer, kinds=["episodic"])
        assert err.value.memory_id == "M3"
    assert bank.head == head


def test_custom_scorer_sees_query_statistics(seed):
    def by_length(memory, query):
        return None if query.cosine(memory) == 0 else -len(memory.content)

    ctx = seed(Q_INCIDENT, scorer=by_length, max_records=1)
    assert selected(ctx) == ["M2"]  # the shortest matching memory


def test_hybrid_hook_uses_an_embedding(seed):
    def embed(text):  # a toy embedding: does the text talk about food?
        return [1.0, 0.0] if "pizza" in text or "food" in text else [0.0, 1.0]

    ctx = seed("food", scorer=Hybrid(embed, semantic=1.0), max_records=1)
    assert selected(ctx) == ["M9"]  # no shared word, found by the embedding


def test_poolsplit_scorer(seed):
    ctx = seed(Q_INCIDENT, scorer="poolsplit")
    assert ctx.scorer == "poolsplit" and ctx.selected
    with pytest.raises(InvalidInput):
        seed(Q_INCIDENT, scorer="poolsplit", recency_weight=0.5)


def test_default_scorer_finds_inflections(seed):
    ctx = seed("investigate alert", scorer="memory", max_records=1)
    assert selected(ctx) == ["M5"]  # "investigating ... alerts"


def test_render_and_json(seed):
    ctx = seed(Q_PROCEDURE, budget=Words(21), kinds=["procedural"])
    assert ctx.render().splitlines()[0].startswith("- Database timeout procedure")
    data = ctx.to_dict()
    assert [s["id"] for s in data["selected"]] == ["M4", "M7"]
    assert len(data["rows"]) == len(ctx.rows)
    import json

    json.dumps(data)


def test_list_of_memories(tmp_path, now):
    store = build_bank(str(tmp_path / "l.db"), now)
    memories = store.find(live=False)
    from_list = recall(memories, Q_INCIDENT, tenant="team-a", now=now, scorer="tfidf")
    from_store = recall(store, Q_INCIDENT, tenant="team-a", now=now, scorer="tfidf")
    assert [(r.memory.id, r.score) for r in from_list.rows] == [
        (r.memory.id, r.score) for r in from_store.rows
    ]
    store.close()


def conversation(tmp_path, now, turns):
    """A store holding one conversation: (session, hours ago, text) per turn, one commit each."""
    store = memcommit.open(str(tmp_path / "conv.db"))
    for i, (session, hours, text) in enumerate(turns):
        with store.commit(message="turn", now=now - timedelta(hours=hours, seconds=-i)) as tx:
            tx.add(text, id=f"T{i}", tenant="c", kind="event", session=session)
    return store


def test_default_scorer_lifts_the_reply_next_to_the_matching_question(tmp_path, now):
    store = conversation(
        tmp_path,
        now,
        [
            ("s1", 50, "Mel: what did you research for the adoption?"),
            ("s1", 50, "Caro: agencies that help lgbtq families, mostly."),
            ("s1", 50, "Mel: nice weather today."),
            ("s2", 20, "Caro: went hiking with friends."),
        ],
    )
    query = "What did Caro research for adoption?"
    ranked = recall(store, query, tenant="c", now=now, max_records=2)
    # T1 shares no word but answers T0, and Caro, whom the query names, said it
    assert selected(ranked) == ["T1", "T0"]
    plain = recall(store, query, tenant="c", now=now, max_records=2, scorer="tfidf")
    assert "T1" not in selected(plain) or selected(plain)[0] != "T1"
    store.close()


def test_default_scorer_prefers_memories_from_the_month_named(tmp_path, now):
    store = conversation(
        tmp_path,
        now,
        [("s1", 24 * 200, "Caro: painted a sunrise."), ("s2", 24 * 20, "Caro: painted a sunset.")],
    )
    month = (now - timedelta(days=20)).strftime("%B %Y")
    query = f"What did Caro paint in {month}?"
    assert selected(recall(store, query, tenant="c", now=now, max_records=1)) == ["T1"]
    # equal words otherwise: without the month the older memory wins the tie
    assert selected(recall(store, "What did Caro paint?", tenant="c", now=now, max_records=1)) == [
        "T0"
    ]
    store.close()
