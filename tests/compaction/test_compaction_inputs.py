"""Bad arguments to Compactor, compact and merge are refused at once, naming the field and value.

Unchecked, an empty author failed only at the first commit, a key that is not
callable only as a per-trace error, ``progress=1`` with TypeError inside the
commit, ``merge(task=5)`` and ``Compactor(None).compact()`` with AttributeError.
Each is now an InvalidInput raised before anything is read or written. Both
backends.
"""

from __future__ import annotations

import pytest
from compaction_store import add_trace, dump, later

from memcommit.compaction import Compactor
from memcommit.errors import InvalidInput


@pytest.fixture
def store(make_store):
    """A fresh store on each backend, holding one finished trace (and one summary to merge)."""
    store = make_store("mem.db")
    for i in range(2):
        add_trace(store, "Nightly backup", at=later(i))
    Compactor(store).compact(now=later(3))
    add_trace(store, "Nightly backup", at=later(4))
    return store


MADE = {
    "store": (None, lambda store, v: Compactor(v)),
    "key": (1, lambda store, v: Compactor(store, key=v)),
    "author": ("", lambda store, v: Compactor(store, author=v)),
    "author ": (5, lambda store, v: Compactor(store, author=v)),
}
CALLED = {
    "progress": (1, lambda c, v: c.compact(now=later(9), progress=v)),
    "task": (5, lambda c, v: c.merge(task=v, now=later(9))),
    "task ": (["Nightly backup"], lambda c, v: c.merge(task=v, now=later(9))),
}


@pytest.mark.parametrize("case", sorted(MADE))
def test_a_bad_constructor_argument_is_refused_when_made(store, case):
    value, make = MADE[case]
    with pytest.raises(InvalidInput) as caught:
        make(store, value)
    assert (caught.value.field, caught.value.value) == (case.strip(), value)


@pytest.mark.parametrize("case", sorted(CALLED))
def test_a_bad_call_argument_is_refused_before_anything_is_written(store, case):
    value, call = CALLED[case]
    before = dump(store)
    with pytest.raises(InvalidInput) as caught:
        call(Compactor(store), value)
    assert (caught.value.field, caught.value.value) == (case.strip(), value)
    assert dump(store) == before


def test_good_arguments_still_compact_and_merge(store):
    told = []
    compactor = Compactor(store, key=lambda trace: "backup", author="nightly")
    result = compactor.compact(now=later(9), progress=lambda done, total: told.append(done))
    assert len(result.traces) == 1 and told == [1]
    assert result.commit.author == "nightly"
    assert len(compactor.merge(task="Nightly backup", now=later(10)).superseded) == 3
