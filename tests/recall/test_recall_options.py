"""RecallOptions: one frozen value for every recall argument, checked once, normal when made."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memcommit
from memcommit.errors import InvalidInput
from memcommit.model import KINDS, LIVE_TIERS, TIERS
from memcommit.recall import Pool, RecallOptions, Tokens, Words, recall
from memcommit.recall.pipeline.filters import Scope
from memcommit.recall.scoring.registry import DEFAULT_SCORER, SCORERS

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def view(make_store):
    store = make_store(clock=lambda: NOW - timedelta(days=2))
    view = store.tenant("acme")
    with view.commit(message="seed") as tx:
        tx.add("Deploys run on Tuesdays after the standup.", kind="fact", key="deploy.day")
        tx.add("Deploys moved to Wednesdays.", kind="fact", key="deploy.day")
        tx.add("The deploy of 3 March failed on a missing migration.", kind="event", session="s1")
        tx.add("Deploy checklist: migrate, then restart.", kind="procedure", session="s2")
        tx.add("Never deploy on a Friday.", kind="correction", always=True)
        tx.add("Old deploy notes.", kind="fact", tier="archive")
    return view


def test_the_defaults_are_recalls_defaults():
    options = RecallOptions()
    assert options.tiers == LIVE_TIERS == ("short", "mid", "long")
    assert options.scorer == DEFAULT_SCORER == "memory" and DEFAULT_SCORER in SCORERS
    assert (options.latest_per_key, options.live, options.include_previous_sessions) == (
        True,
        True,
        True,
    )
    assert options.half_life == timedelta(hours=24) and options.recency_weight == 0.0
    assert options.budget is options.max_records is options.pools is options.now is None
    assert memcommit.RecallOptions is RecallOptions


def test_values_are_normal_when_made():
    options = RecallOptions(
        kinds=["semantic", "event", "fact"],
        scopes="shared",
        tiers=["short", "archive"],
        pools=Pool("facts", 10, 2, ("fact",)),
        scorer=None,
        recency_weight=1,
    )
    assert options.kinds == ("fact", "event")
    assert options.scopes == ("shared",)
    assert options.tiers == ("short", "archive")
    assert options.pools == (Pool("facts", 10, 2, ("fact",)),)
    assert options.scorer == "memory"
    assert options.recency_weight == 1.0 and isinstance(options.recency_weight, float)
    assert RecallOptions(kinds="all").kinds is None


def test_options_are_frozen_and_replace_checks_again():
    options = RecallOptions(max_records=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_records = 4  # type: ignore[misc]
    assert options.replace(max_records=4).max_records == 4
    assert options.replace() is options
    with pytest.raises(InvalidInput) as err:
        options.replace(max_records=-1)
    assert err.value.field == "max_records"


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("tenant", "", "must name the tenant to recall for"),
        ("tenant", 7, "must name the tenant to recall for"),
        ("kinds", ["facts"], "unknown kind 'facts'"),
        ("kinds", 3, "must be a list of kinds or memory stores"),
        ("scopes", [1], "1 is not a name"),
        ("session", 5, "must be a session name or None"),
        ("include_previous_sessions", "no", "must be True or False"),
        ("include_previous_sessions", False, "pass session=..."),
        ("max_age", timedelta(seconds=-1), "must be a timedelta >= 0 or None"),
        ("latest_per_key", 1, "must be True or False"),
        ("live", None, "must be True or False"),
        ("tiers", ["hot"], "unknown 'hot'; allowed: short, mid, long, archive"),
        ("recency_weight", 1.5, "must be a number in [0, 1]"),
        ("recency_weight", True, "must be a number in [0, 1]"),
        ("half_life", timedelta(0), "must be a timedelta > 0"),
        ("budget", 80, "must be Words(n), Tokens(n) or None"),
        ("max_records", True, "must be an int >= 0 or None"),
        ("max_records", -1, "must be an int >= 0 or None"),
        ("pools", [], "must hold at least one pool"),
        ("pools", ["context"], "'context' is not a poolsplit.Pool"),
        ("pools", [Pool("a", 1, 1), Pool("a", 1, 1)], "duplicate pool name 'a'"),
        ("pools", [Pool("a", 1, 1, ("facts",))], "unknown kind 'facts'"),
        ("scorer", "bm99", "allowed: memory, tfidf, poolsplit, jaccard, or a callable"),
        ("scorer", 3, "must be a scorer name or callable(memory, query)"),
        ("now", datetime(2026, 11, 1), "timezone"),
        ("explain", "yes", "must be True or False"),
    ],
)
def test_a_bad_value_names_its_field(field, value, reason):
    with pytest.raises(InvalidInput) as err:
        RecallOptions(**{field: value})
    assert err.value.field == field
    assert reason in str(err.value)


def test_checks_that_need_two_fields():
    with pytest.raises(InvalidInput, match="reserve more than the budget of 10") as err:
        RecallOptions(budget=Words(10), pools=[Pool("a", 11, 1)])
    assert err.value.field == "pools"
    with pytest.raises(InvalidInput, match="more entries than max_records=1"):
        RecallOptions(max_records=1, pools=[Pool("a", 0, 2)])
    with pytest.raises(InvalidInput, match="its own recency") as err:
        RecallOptions(scorer="poolsplit", recency_weight=0.5)
    assert err.value.field == "recency_weight"


def test_the_keyword_api_and_the_options_value_are_one_call(view):
    keywords = {
        "kinds": ["fact", "event", "procedure"],
        "budget": Words(12),
        "max_records": 3,
        "recency_weight": 0.2,
        "now": NOW,
        "explain": True,
    }
    by_keywords = recall(view, "when do deploys run", **keywords)
    by_value = recall(view, "when do deploys run", RecallOptions(**keywords))
    half = RecallOptions(kinds=keywords["kinds"], budget=Words(12), now=NOW)
    by_both = recall(view, "when do deploys run", half, max_records=3, recency_weight=0.2,
                     explain=True)  # fmt: skip
    by_store = view.recall("when do deploys run", RecallOptions(**keywords))
    expected = by_keywords.to_dict(rows=True)
    assert by_value.to_dict(rows=True) == expected
    assert by_both.to_dict(rows=True) == expected
    assert by_store.to_dict(rows=True) == expected
    assert by_keywords.selected  # the comparison is about a real selection


def test_recall_refuses_what_is_not_options(view):
    with pytest.raises(InvalidInput) as err:
        recall(view, "deploys", {"max_records": 1})  # type: ignore[arg-type]
    assert err.value.field == "options"
    with pytest.raises(TypeError):
        recall(view, "deploys", max_record=1)  # a misspelt keyword, as before
    with pytest.raises(TypeError):
        recall(view, "deploys", RecallOptions(), max_record=1)


def test_the_scope_filters_are_the_options_filter_fields():
    options = RecallOptions(kinds="semantic", session="s1", include_previous_sessions=False)
    scope = Scope.of(options, pool_kinds=("fact",))
    assert (scope.kinds, scope.session, scope.include_previous_sessions) == (
        ("fact",),
        "s1",
        False,
    )
    assert scope.tiers == LIVE_TIERS and scope.pool_kinds == ("fact",)
    assert Scope.parse(kinds="semantic", session="s1", include_previous_sessions=False) == (
        Scope.of(options)
    )


def _valid_fields():
    """Strategies for a valid value of each field that needs no other field to be valid."""
    return {
        "tenant": st.sampled_from(["acme", "globex"]),
        "kinds": st.one_of(st.none(), st.lists(st.sampled_from(KINDS), min_size=1, unique=True)),
        "scopes": st.one_of(st.none(), st.lists(st.sampled_from(["shared", "ops"]), unique=True)),
        "latest_per_key": st.booleans(),
        "live": st.booleans(),
        "tiers": st.one_of(st.none(), st.lists(st.sampled_from(TIERS), min_size=1, unique=True)),
        "recency_weight": st.floats(0.0, 1.0),
        "half_life": st.integers(1, 10_000).map(lambda m: timedelta(minutes=m)),
        "max_age": st.one_of(st.none(), st.integers(0, 10_000).map(lambda m: timedelta(hours=m))),
        "budget": st.one_of(
            st.none(), st.integers(0, 500).map(Words), st.integers(0, 500).map(Tokens)
        ),
        "max_records": st.one_of(st.none(), st.integers(0, 50)),
        "scorer": st.sampled_from([None, "memory", "tfidf"]),
        "as_of": st.one_of(st.none(), st.integers(1, 99)),
        "now": st.one_of(st.none(), st.just(NOW)),
        "explain": st.booleans(),
    }


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_options_from_shuffled_keywords_are_equal(data):
    strategies = _valid_fields()
    chosen = data.draw(st.lists(st.sampled_from(sorted(strategies)), unique=True))
    keywords = {name: data.draw(strategies[name]) for name in chosen}
    shuffled = data.draw(st.permutations(list(keywords.items())))
    one, other = RecallOptions(**keywords), RecallOptions(**dict(shuffled))
    assert one == other and hash(one) == hash(other)
    # Building in two steps, in the other order, reaches the same value.
    half = len(shuffled) // 2
    stepped = RecallOptions(**dict(shuffled[:half])).replace(**dict(shuffled[half:]))
    assert stepped == one
