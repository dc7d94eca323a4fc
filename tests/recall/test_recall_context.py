"""The Context as a sequence of what it selected, and the messages of bad recall input."""

from __future__ import annotations

import pytest
from recall_bank import Q_INCIDENT, selected

from memcommit import TieredMemory
from memcommit.errors import InvalidInput
from memcommit.model import KINDS, STORES


def test_a_context_iterates_and_counts_its_selection(seed):
    context = seed(Q_INCIDENT, max_records=2)
    assert [m.id for m in context] == selected(context) == [m.id for m in context.selected]
    assert len(context) == len(context.selected) == 2
    assert len(seed("zebra quantum", max_records=2)) == 0


def test_the_seed_touches_what_a_context_selected(bank, seed, now):
    context = seed(Q_INCIDENT, max_records=2)
    tiers = TieredMemory(bank, auto=False)
    tiers.touch([m.id for m in context])  # seed 003's line, verbatim
    uses = bank.usage([m.id for m in context.selected])
    assert {i: u.count for i, u in uses.items()} == {m.id: 1 for m in context.selected}


def test_an_unknown_kind_lists_each_allowed_value_once(seed):
    with pytest.raises(InvalidInput) as err:
        seed(Q_INCIDENT, kinds=["gossip"])
    assert err.value.field == "kinds"
    listed = str(err.value).split("allowed: ", 1)[1].split(", ")
    assert sorted(listed) == sorted({*STORES, *KINDS, "all"})
    assert len(listed) == len(set(listed))
