"""One input rule per kind of value, in every layer (issue 12, item 4).

A naive datetime is refused with the same InvalidInput by the store, recall,
the tiers and compaction; one string where a list is expected is a list of one
everywhere. (The exclusion reasons, one enum: tests/recall/test_recall_reasons.py.)
"""

from __future__ import annotations

from datetime import datetime

import pytest

from memcommit import Compactor, TieredMemory
from memcommit.errors import InvalidInput

NAIVE = datetime(2026, 11, 1, 12, 0)


@pytest.fixture
def agent(make_store, now):
    view = make_store().tenant("acme")
    with view.commit(message="seed", author="t", now=now) as tx:
        tx.add("Deploys happen on weekdays.", scope="ops")
        tx.add("The planner keeps notes.", scope="planner")
    return view


CALLS = {
    "commit": lambda a: a.commit(message="m", author="t", now=NAIVE).__enter__(),
    "recall": lambda a: a.recall("deploys", now=NAIVE),
    "find as_of": lambda a: a.find(as_of=NAIVE),
    "find since": lambda a: a.find(since=NAIVE),
    "working": lambda a: TieredMemory(a).working(now=NAIVE),
    "touch": lambda a: TieredMemory(a).touch([a.find()[0].id], now=NAIVE),
    "maintain": lambda a: TieredMemory(a).maintain(now=NAIVE),
    "compact": lambda a: Compactor(a).compact(now=NAIVE),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_every_layer_refuses_a_naive_datetime_the_same_way(agent, call):
    with pytest.raises(InvalidInput) as caught:
        CALLS[call](agent)
    assert "timezone-aware" in caught.value.reason
    assert len(agent.log()) == 1


def test_one_string_is_a_list_of_one_everywhere(agent):
    tiers = TieredMemory(agent)
    assert [m.scope for m in agent.find(scopes="ops")] == ["ops"]
    assert [m.scope for m in tiers.working("ops")] == ["ops"]
    assert tiers.working("ops") == tiers.working(["ops"])
    memory_id = agent.find(scopes="ops")[0].id
    assert tiers.touch(memory_id).hits == tiers.touch([memory_id]).hits == [memory_id]
    with agent.commit(message="tag", author="t") as tx:
        tagged = tx.add("Tagged once.", tags="ops")
    assert tagged.tags == ("ops",)


@pytest.mark.parametrize("bad", [b"ops", 3, [""], ["ops", 4]])
def test_a_bad_list_is_refused_the_same_way_everywhere(agent, bad):
    tiers = TieredMemory(agent)
    refusals = []
    for call in (lambda: agent.find(scopes=bad), lambda: tiers.working(bad)):
        with pytest.raises(InvalidInput) as caught:
            call()
        refusals.append((caught.value.field, caught.value.reason))
    assert refusals[0] == refusals[1]
