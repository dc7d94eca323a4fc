"""Property: a read as of commit k answers exactly what a read right after commit k answered."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import operation, play

_names = itertools.count()


def snapshot(store, as_of=None):
    memories = {
        (m.id, m.version, m.content, m.status, m.tier) for m in store.find(live=False, as_of=as_of)
    }
    traces = {(t.id, t.status, len(t.steps)) for t in store.traces(as_of=as_of)}
    return memories, traces, store.tenants(as_of=as_of)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(commits=st.lists(st.lists(operation, min_size=1, max_size=5), min_size=1, max_size=5))
def test_as_of_replays_every_earlier_state(make_store, commits):
    store = make_store(f"replay-{next(_names)}.db")
    seen = {}
    store.on_commit(lambda c: seen.setdefault(c.seq, snapshot(store)))
    play(store, commits)
    purged = {m.id for m in store.find(live=False) if m.status == "purged"}
    for seq, (memories, traces, tenants) in seen.items():
        then = snapshot(store, as_of=seq)
        # purge erases content from every version, so erased content is the one allowed change
        assert {x for x in then[0] if x[0] not in purged} == {
            x for x in memories if x[0] not in purged
        }
        assert {x[:2] for x in then[0]} == {x[:2] for x in memories}
        assert then[1:] == (traces, tenants)
        for mid, version, *_ in memories:
            assert store.get(mid, as_of=seq).version == version
    assert [c.seq for c in reversed(store.log())] == sorted(seen)
