"""`Reason`: every exclusion reason once, equal to the strings rows, packing and the page use."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcommit
import poolsplit
from memcommit.model import Memory
from memcommit.recall import REASONS, Reason, Words, recall
from memcommit.recall.pipeline.filters import PASSED
from memcommit.recall.pipeline.reasons import FILTERS
from memcommit.workbench.view import other_tenant_row

NOW = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
APP_JS = Path(memcommit.__file__).parent / "workbench" / "static" / "app.js"


def test_the_reasons_keep_their_strings_and_their_pipeline_order():
    assert REASONS == (
        "other_kind",
        "other_scope",
        "previous_session",
        "too_old",
        "superseded",
        "no_longer_holds",
        "archived",
        "other_tier",
        "no_lexical_match",
        "over_budget",
        "over_record_limit",
        "claimed_by_pool",
    )
    assert all(type(reason) is str for reason in REASONS)
    assert [r.value for r in Reason] == ["other_tenant", *REASONS]
    assert Reason("too_old") is Reason.TOO_OLD and Reason.TOO_OLD == "too_old"
    assert str(Reason.OVER_BUDGET) == f"{Reason.OVER_BUDGET}" == "over_budget"


def test_packings_reasons_are_poolsplits_outcomes():
    assert Reason.OVER_BUDGET == poolsplit.OVER_BUDGET == "over_budget"
    assert Reason.OVER_RECORD_LIMIT == poolsplit.OVER_RECORD_LIMIT == "over_record_limit"
    left_out = set(poolsplit.OUTCOMES) - {poolsplit.ALWAYS, poolsplit.SELECTED}
    assert left_out == {Reason.OVER_BUDGET, Reason.OVER_RECORD_LIMIT}


def test_the_filters_codes_are_their_order():
    assert [reason.code for reason in FILTERS] == list(range(1, 9))
    assert FILTERS[Reason.TOO_OLD.code - 1] is Reason.TOO_OLD
    assert [reason.value for reason in FILTERS] == list(REASONS[:8])
    later = [reason for reason in Reason if reason not in FILTERS]
    assert [reason.code for reason in later] == [PASSED] * len(later)


def test_the_workbench_page_words_every_reason_and_no_other():
    table = re.search(r"const REASONS = \{(.*?)\n\};", APP_JS.read_text(), re.S)
    assert table is not None
    keys = re.findall(r"^\s+(\w+):", table.group(1), re.M)
    assert sorted(keys) == sorted(reason.value for reason in Reason)


def test_the_workbench_row_of_another_tenant_gives_a_reason():
    row = other_tenant_row(Memory(id="x", content="theirs", tenant="b"))
    assert row.reason == Reason.OTHER_TENANT and type(row.reason) is str


specs = st.lists(
    st.tuples(
        st.lists(st.sampled_from(["alpha", "beta", "logs", "pool", "hiking"]), max_size=6),
        st.sampled_from(["fact", "event", "procedure", "working"]),
        st.sampled_from(["shared", "ops"]),
        st.sampled_from(["short", "mid", "archive"]),
        st.sampled_from([None, "s1", "s2"]),
        st.integers(0, 72),
        st.booleans(),
        st.sampled_from([None, "k"]),
    ),
    min_size=4,
    max_size=16,
)
packings = st.sampled_from(
    [
        {"budget": Words(6), "max_records": 3},
        {"budget": Words(40), "max_records": 1},
        {"pools": [poolsplit.Pool("facts", 6, 1, ("fact",)), poolsplit.Pool("any", 8, 2)]},
        {"pools": [poolsplit.Pool("first", 10, 1), poolsplit.Pool("second", 10, 3)]},
    ]
)
narrowings = st.sampled_from(
    [
        {},
        {"kinds": ["fact", "event"], "scopes": ["shared"]},
        {"session": "s1", "include_previous_sessions": False},
        {"max_age": timedelta(hours=48), "tiers": ["short"]},
    ]
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs, packings, narrowings)
def test_every_reason_a_row_gives_is_a_reason(specs, packing, narrowing):
    bank = [
        Memory(
            id=f"m{i}",
            content=" ".join(words) or "nothing",
            kind=kind,
            scope=scope,
            tier=tier,
            session=session,
            key=key,
            tenant="a",
            created_at=NOW - timedelta(hours=age),
            valid_to=NOW - timedelta(hours=1) if ended else None,
        )
        for i, (words, kind, scope, tier, session, age, ended, key) in enumerate(specs)
    ]
    ctx = recall(bank, "alpha logs", tenant="a", now=NOW, scorer="tfidf", **narrowing, **packing)
    for row in ctx.rows:
        assert (row.outcome == "selected") == (row.reason is None)
        assert row.reason is None or row.reason in REASONS
        for _, decision in row.trail:
            assert decision in REASONS or decision in (poolsplit.SELECTED, poolsplit.ALWAYS)


def test_rows_give_every_reason_recall_lists():
    def fact(id, content="alpha", age=1, **fields):
        fields = {"kind": "fact", "scope": "shared", "session": "s1", **fields}
        return Memory(id, content, tenant="a", created_at=NOW - timedelta(hours=age), **fields)

    bank = [
        fact("event", kind="event"),
        fact("ops", scope="ops"),
        fact("earlier", session="s2"),
        fact("old", age=100),
        fact("was", key="k", age=2),
        fact("is", key="k"),
        fact("ended", valid_to=NOW - timedelta(hours=1)),
        fact("archived", tier="archive"),
        fact("mid", tier="mid"),
        fact("unrelated", content="beta gamma"),
        fact("long", content="alpha " * 20),
        fact("short"),
    ]
    scope = {
        "kinds": ["fact"],
        "scopes": ["shared"],
        "session": "s1",
        "include_previous_sessions": False,
        "max_age": timedelta(hours=48),
        "tiers": ["short"],
    }
    packings = [
        {"budget": Words(5)},
        {"max_records": 1},
        {"pools": [poolsplit.Pool("first", 100, 1), poolsplit.Pool("second", 100, 5)]},
    ]
    given = set()
    for packing in packings:
        ctx = recall(bank, "alpha", tenant="a", now=NOW, scorer="tfidf", **scope, **packing)
        given |= {row.reason for row in ctx.rows} | {d for row in ctx.rows for _, d in row.trail}
    assert given - {None, poolsplit.SELECTED} == set(REASONS)  # each one, and no other
