"""The eviction policies' name table: one list for simulate(), --eviction and tiers simulate."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memcommit.cli import main
from memcommit.errors import InvalidInput
from memcommit.tiers.policies import EvictionPolicy, TwoQueue
from memcommit.tiers.policies.names import ALIASES, EVICTION_POLICIES, policy_by_name


@pytest.mark.parametrize("name", [*EVICTION_POLICIES, *ALIASES])
def test_every_name_builds_a_fresh_policy_of_its_class(name):
    made = policy_by_name(name.upper())
    expected = EVICTION_POLICIES[ALIASES.get(name, name)]
    assert type(made) is expected and isinstance(made, EvictionPolicy)
    assert policy_by_name(name) is not made


def test_the_alias_and_the_name_are_one_policy():
    assert type(policy_by_name("twoqueue")) is type(policy_by_name("2q")) is TwoQueue


@pytest.mark.parametrize("name", ["belady", "", 3, None])
def test_an_unknown_name_lists_every_choice(name):
    with pytest.raises(InvalidInput) as info:
        policy_by_name(name)
    assert info.value.field == "policy"
    assert "2q, arc, fifo, forgetting, learned, lfu, lru, scored, twoqueue" in str(info.value)


def test_tiers_simulate_replays_every_policy_of_the_table_by_default(tmp_path):
    trace = tmp_path / "trace.txt"
    trace.write_text("a\nb\na\nc\na\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["tiers", "simulate", str(trace), "--capacity", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    policies = [row["policy"] for row in json.loads(result.output)]
    assert policies == [type(make()).__name__ for make in EVICTION_POLICIES.values()]
