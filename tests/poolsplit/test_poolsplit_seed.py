"""One test per sentence of the poolsplit spec (seed 000), in the seed's order."""

from __future__ import annotations

import ast
import dataclasses
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import poolsplit
from poolsplit import (
    Pool,
    default_is_active,
    default_scorer,
    default_token_counter,
    retrieve,
    retrieve_pools,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
SOURCE = Path(poolsplit.__file__).read_text(encoding="utf-8")


def entry(id, type="fact", **fields):
    """An entry with an id, a type and a 40-character (10-token) content unless given."""
    return {"id": id, "type": type, "content": fields.pop("content", "x" * 40), **fields}


def ids(selected):
    return [e["id"] for e in selected]


# ── Purpose ─────────────────────────────────────────────────────────────────


def store_with_priorities():
    """Ten high-priority facts, three low-priority growth and skill entries."""
    facts = [entry(f"f{n}", "fact", base_priority=9) for n in range(10)]
    growth = [entry(f"g{n}", "growth", base_priority=2) for n in range(3)]
    skills = [entry(f"s{n}", "skill", base_priority=3) for n in range(3)]
    return facts + growth + skills


def test_one_budget_lets_high_priority_types_take_the_whole_context():
    selected = retrieve(store_with_priorities(), Pool("all", 60, 6), now=NOW)
    assert {e["type"] for e in selected} == {"fact"}


def test_pools_give_low_priority_types_guaranteed_space():
    pools = [
        Pool("facts", 40, 4, ("fact",)),
        Pool("growth", 10, 1, ("growth",)),
        Pool("skills", 10, 1, ("skill",)),
    ]
    result = retrieve_pools(store_with_priorities(), pools, now=NOW)
    assert [len(result[name]) for name in ("facts", "growth", "skills")] == [4, 1, 1]


def test_fresh_content_pushes_out_a_correction_that_competes_for_budget():
    old = (NOW - timedelta(days=200)).isoformat()
    correction = entry("c", "correction", created=old, content="never force-push to main")
    burst = [entry(f"n{n}", "correction", created=NOW.isoformat()) for n in range(20)]
    assert correction not in retrieve([correction, *burst], Pool("p", 50, 5), now=NOW)


def test_an_always_scope_correction_loads_on_the_busiest_turn():
    old = (NOW - timedelta(days=200)).isoformat()
    correction = entry("c", "correction", created=old, scope="always", base_priority=0)
    burst = [entry(f"n{n}", "correction", created=NOW.isoformat()) for n in range(500)]
    assert retrieve([*burst, correction], Pool("p", 50, 5), now=NOW)[0] is correction


# ── Pool ────────────────────────────────────────────────────────────────────


def test_each_pool_has_a_token_cap_and_an_entry_cap_for_a_set_of_types():
    pool = Pool("skills", max_tokens=400, max_entries=3, types=("skill", "procedure"))
    assert (pool.name, pool.max_tokens, pool.max_entries, pool.types) == (
        "skills",
        400,
        3,
        ("skill", "procedure"),
    )


def test_pools_are_filled_independently():
    entries = [entry(f"f{n}", "fact", base_priority=9) for n in range(5)] + [
        entry("g", "growth", base_priority=1)
    ]
    pools = [Pool("facts", 1000, 100, ("fact",)), Pool("growth", 10, 1, ("growth",))]
    result = retrieve_pools(entries, pools, now=NOW)
    assert ids(result["growth"]) == ["g"]
    assert len(result["facts"]) == 5


def test_pool_is_a_frozen_dataclass_with_types_defaulting_to_none():
    pool = Pool("p", 10, 2)
    assert dataclasses.is_dataclass(pool)
    assert pool.types is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        pool.max_tokens = 5  # type: ignore[misc]
    assert [f.name for f in dataclasses.fields(Pool)] == [
        "name",
        "max_tokens",
        "max_entries",
        "types",
    ]


def test_name_is_the_key_of_the_pool_results():
    result = retrieve_pools([entry("a")], [Pool("mine", 10, 1)], now=NOW)
    assert list(result) == ["mine"]


def test_max_tokens_caps_context_entries_only():
    always = [entry(f"a{n}", scope="always") for n in range(3)]
    context = [entry(f"c{n}") for n in range(3)]
    selected = retrieve(always + context, Pool("p", 20, 10), now=NOW)
    assert ids(selected) == ["a0", "a1", "a2", "c0", "c1"]


def test_max_entries_caps_context_entries_and_ignores_always_scope():
    always = [entry(f"a{n}", scope="always") for n in range(3)]
    context = [entry(f"c{n}") for n in range(3)]
    selected = retrieve(always + context, Pool("p", 1000, 1), now=NOW)
    assert ids(selected) == ["a0", "a1", "a2", "c0"]


def test_types_restricts_the_pool_and_none_accepts_all_types():
    entries = [entry("f", "fact"), entry("s", "skill"), entry("x", "odd")]
    assert ids(retrieve(entries, Pool("p", 100, 10, ("skill",)), now=NOW)) == ["s"]
    assert sorted(ids(retrieve(entries, Pool("p", 100, 10), now=NOW))) == ["f", "s", "x"]


@pytest.mark.parametrize("field", ["max_tokens", "max_entries"])
def test_negative_caps_raise_value_error(field):
    caps = {"max_tokens": 10, "max_entries": 10, field: -1}
    with pytest.raises(ValueError, match=field):
        Pool("p", **caps)


# ── Always-scope unconditional loading ─────────────────────────────────────


def test_always_scope_loads_first_and_bypasses_both_caps():
    context = [entry(f"c{n}", base_priority=100) for n in range(5)]
    always = [entry(f"a{n}", scope="always", token_count=500) for n in range(4)]
    selected = retrieve(context + always, Pool("p", 0, 0), now=NOW)
    assert ids(selected) == ["a0", "a1", "a2", "a3"]


def test_always_scope_is_never_pushed_out_by_new_content():
    correction = entry("rule", "correction", scope="always", content="ask before deleting")
    for burst_size in (0, 10, 1000):
        burst = [
            entry(f"n{n}", "correction", base_priority=50, created=NOW.isoformat())
            for n in range(burst_size)
        ]
        selected = retrieve([*burst, correction], Pool("p", 30, 3), now=NOW)
        assert selected[0] is correction


# ── retrieve ────────────────────────────────────────────────────────────────


def test_retrieve_takes_scorer_token_counter_is_active_and_now_as_keywords():
    calls = []

    def scorer(e, context, *, now):
        calls.append((e["id"], context, now))
        return 1.0

    selected = retrieve(
        [entry("a", content="abc"), entry("b", status="gone")],
        Pool("p", 10, 10),
        {"message": "m"},
        scorer=scorer,
        token_counter=lambda text: 7,
        is_active=lambda e: True,
        now=NOW,
    )
    assert ids(selected) == ["a"]  # 7 + 7 > 10
    assert calls == [("a", {"message": "m"}, NOW), ("b", {"message": "m"}, NOW)]
    with pytest.raises(TypeError):
        retrieve([], Pool("p", 1, 1), None, default_scorer)  # type: ignore[misc]


def test_only_active_entries_are_kept_then_only_the_pools_types():
    entries = [
        entry("ok", "skill"),
        entry("archived", "skill", status="archived"),
        entry("superseded", "skill", superseded_by="ok"),
        entry("wrong-type", "fact"),
    ]
    assert ids(retrieve(entries, Pool("p", 100, 10, ("skill",)), now=NOW)) == ["ok"]


def test_an_entry_without_type_is_a_note():
    untyped = {"id": "u", "content": "hello"}
    assert retrieve([untyped], Pool("p", 10, 1, ("note",)), now=NOW) == [untyped]
    assert retrieve([untyped], Pool("p", 10, 1, ("fact",)), now=NOW) == []


def test_entries_split_on_scope_equal_to_always():
    entries = [entry("c", scope="session", base_priority=9), entry("a", scope="always")]
    assert ids(retrieve(entries, Pool("p", 100, 10), now=NOW)) == ["a", "c"]


def test_context_entries_sort_by_score_then_created_then_id_then_input_order():
    entries = [
        entry("d", base_priority=5, created="2026-05-02"),
        entry("c", base_priority=5, created="2026-05-01"),
        {"type": "fact", "content": "x" * 40, "base_priority": 5, "created": "2026-05-01"},
        entry("b", base_priority=6, created="2026-05-03"),
        entry("a", base_priority=5, created="2026-05-01"),
        {"type": "fact", "content": "y" * 40, "base_priority": 5, "created": "2026-05-01"},
    ]
    # Equal recency: score ties are broken by created, then id ("" first), then input order.
    selected = retrieve(entries, Pool("p", 1000, 10), now=datetime(2026, 4, 1))
    assert selected == [entries[3], entries[2], entries[5], entries[4], entries[1], entries[0]]


def test_input_order_only_breaks_remaining_ties():
    entries = [entry(f"e{n}", base_priority=n) for n in range(6)]
    forward = retrieve(entries, Pool("p", 30, 3), now=NOW)
    backward = retrieve(entries[::-1], Pool("p", 30, 3), now=NOW)
    assert ids(forward) == ids(backward) == ["e5", "e4", "e3"]
    twins = [{"content": "same"}, {"content": "same"}]
    assert retrieve(twins, Pool("p", 1, 1), now=NOW)[0] is twins[0]
    assert retrieve(twins[::-1], Pool("p", 1, 1), now=NOW)[0] is twins[1]


def test_greedy_fill_skips_an_entry_that_does_not_fit_and_continues():
    entries = [
        entry("big", base_priority=9, token_count=80),
        entry("mid", base_priority=8, token_count=30),
        entry("small", base_priority=7, token_count=20),
        entry("tiny", base_priority=6, token_count=5),
    ]
    assert ids(retrieve(entries, Pool("p", 55, 10), now=NOW)) == ["mid", "small", "tiny"]


def test_cost_prefers_a_positive_integer_token_count():
    assert ids(retrieve([entry("a", token_count=3, content="x" * 400)], Pool("p", 3, 1))) == ["a"]


@pytest.mark.parametrize("odd", [None, 0, -5, 2.5, "7", True])
def test_cost_falls_back_to_the_token_counter_for_anything_else(odd):
    seen = []

    def counter(text):
        seen.append(text)
        return 4

    one = entry("a", token_count=odd, content="some content")
    assert retrieve([one], Pool("p", 4, 1), token_counter=counter, now=NOW) == [one]
    assert retrieve([one], Pool("p", 3, 1), token_counter=counter, now=NOW) == []
    assert seen == ["some content", "some content"]


def test_a_missing_count_never_costs_zero():
    entries = [{"id": f"e{n}"} for n in range(5)]  # no content, no token_count
    assert len(retrieve(entries, Pool("p", 3, 10), now=NOW)) == 3


def test_returned_entries_are_the_same_objects_always_first_in_input_order():
    entries = [
        entry("c1", base_priority=1),
        entry("a2", scope="always"),
        entry("c2", base_priority=9),
        entry("a1", scope="always"),
    ]
    selected = retrieve(entries, Pool("p", 100, 10), now=NOW)
    assert [id(e) for e in selected] == [id(entries[i]) for i in (1, 3, 2, 0)]


def test_retrieve_never_modifies_entries():
    entries = [entry("a", tags=["x"], scope="always"), entry("b", tags=["y"]), entry("c")]
    before = repr(entries)
    retrieve(entries, Pool("p", 10, 1), {"tags": ["x"], "message": "hello"}, now=NOW)
    assert repr(entries) == before


# ── retrieve_pools ──────────────────────────────────────────────────────────


def test_retrieve_pools_fills_every_pool_from_the_same_entries():
    entries = [entry("f", "fact"), entry("s", "skill")]
    result = retrieve_pools(
        entries, [Pool("facts", 100, 5, ("fact",)), Pool("skills", 100, 5, ("skill",))], now=NOW
    )
    assert {name: ids(chosen) for name, chosen in result.items()} == {
        "facts": ["f"],
        "skills": ["s"],
    }


def test_pools_run_in_order_and_an_entry_lands_in_at_most_one():
    entries = [entry("a", scope="always"), entry("b"), entry("c")]
    result = retrieve_pools(entries, [Pool("first", 10, 1), Pool("second", 100, 10)], now=NOW)
    assert ids(result["first"]) == ["a", "b"]
    assert ids(result["second"]) == ["c"]


def test_dedupe_is_by_identity_even_without_an_id():
    twin_a, twin_b = {"content": "same"}, {"content": "same"}
    result = retrieve_pools([twin_a, twin_b], [Pool("one", 1, 1), Pool("two", 1, 1)], now=NOW)
    assert result["one"][0] is twin_a
    assert result["two"][0] is twin_b


def test_duplicate_pool_names_raise_value_error():
    with pytest.raises(ValueError, match="twice"):
        retrieve_pools([], [Pool("twice", 1, 1), Pool("twice", 2, 2)])


# ── Default scorer ──────────────────────────────────────────────────────────


def test_default_score_is_the_product_of_the_five_factors():
    e = {
        "base_priority": 4,
        "created": (NOW - timedelta(days=45)).isoformat(),
        "tags": ["deploy", "db"],
        "project": "api",
        "content": "rollback the deploy before migrating",
    }
    context = {"tags": ["deploy"], "project": "api", "message": "deploy rollback"}
    recency = 1 - (45 / 90) * 0.7
    assert default_scorer(e, context, now=NOW) == pytest.approx(
        4 * recency * 1.25 * 1.5 * (1 + 1.5 * 1.0)
    )


def test_now_makes_scores_deterministic():
    e = {"created": "2026-05-01T00:00:00Z"}
    assert default_scorer(e, None, now=NOW) == default_scorer(e, None, now=NOW)
    later = default_scorer(e, None, now=NOW + timedelta(days=30))
    assert later < default_scorer(e, None, now=NOW)


def test_there_is_no_access_count_or_frequency_term():
    plain = {"content": "deploy notes"}
    used_a_lot = {**plain, "access_count": 10_000, "uses": 99, "frequency": 1.0}
    assert default_scorer(plain, {"message": "deploy"}, now=NOW) == default_scorer(
        used_a_lot, {"message": "deploy"}, now=NOW
    )


def test_scoring_is_pluggable():
    entries = [entry("low", base_priority=1), entry("high", base_priority=9)]
    reverse = retrieve(entries, Pool("p", 10, 1), scorer=lambda e, c, *, now: -e["base_priority"])
    assert ids(reverse) == ["low"]


# ── Default counter and active determination ───────────────────────────────


@pytest.mark.parametrize(("text", "tokens"), [("", 1), ("abc", 1), ("x" * 8, 2), ("x" * 41, 10)])
def test_default_token_counter_is_a_quarter_of_the_length_and_never_zero(text, tokens):
    assert default_token_counter(text) == tokens


@pytest.mark.parametrize(
    ("e", "active"),
    [
        ({}, True),
        ({"status": "active"}, True),
        ({"status": "archived"}, False),
        ({"status": None}, False),
        ({"superseded_by": "m2"}, False),
        ({"superseded_by": None}, True),
        ({"superseded_by": ""}, True),
        ({"status": "active", "superseded_by": "m2"}, False),
    ],
)
def test_default_is_active(e, active):
    assert default_is_active(e) is active


# ── Usage ───────────────────────────────────────────────────────────────────


def test_single_file_with_only_standard_library_imports():
    tree = ast.parse(SOURCE)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported
    assert imported <= sys.stdlib_module_names
    assert Path(poolsplit.__file__).name == "poolsplit.py"


def test_source_is_valid_python_3_9():
    ast.parse(SOURCE, feature_version=(3, 9))


def test_a_vendored_copy_works(tmp_path):
    (tmp_path / "vendored_poolsplit.py").write_text(SOURCE, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        import vendored_poolsplit
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("vendored_poolsplit", None)
    chosen = vendored_poolsplit.retrieve([{"content": "hi"}], vendored_poolsplit.Pool("p", 5, 1))
    assert chosen == [{"content": "hi"}]


def test_public_names():
    for name in (
        "Pool",
        "retrieve",
        "retrieve_pools",
        "default_scorer",
        "default_token_counter",
        "default_is_active",
    ):
        assert name in poolsplit.__all__
