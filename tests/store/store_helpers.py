"""Helpers shared by the store tests: a full dump, and random commit sequences."""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import strategies as st

from memcommit.errors import NotFound

TENANTS = ("a", "b")

operation = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(TENANTS), st.sampled_from(["fact", "event"])),
    st.tuples(st.just("update"), st.integers(0, 20), st.just(None)),
    st.tuples(st.just("invalidate"), st.integers(0, 20), st.just(None)),
    st.tuples(st.just("archive"), st.integers(0, 20), st.just(None)),
    st.tuples(st.just("purge"), st.integers(0, 20), st.just(None)),
    st.tuples(st.just("trace"), st.sampled_from(TENANTS), st.just(None)),
    st.tuples(st.just("use"), st.integers(0, 20), st.just(None)),
)


def play(store, commits):
    """Run random commits over both tenants; return every memory id and trace id made.

    Changes and uses pick among memories landed by earlier commits.
    """
    made, traces = [], []
    for ops in commits:
        landed = list(made)
        touched = set()
        with store.commit(message="random") as tx:
            for op, arg, extra in ops:
                if op == "add":
                    made.append(tx.add(f"note {len(made)} of {arg}", tenant=arg, kind=extra).id)
                elif op == "trace":
                    tid = tx.begin_trace(f"task of {arg}", tenant=arg)
                    made += [tid, tx.step(tid, "a step").id]
                    traces.append(tid)
                elif landed and op == "use":
                    store.record_uses([landed[arg % len(landed)]])
                elif landed:
                    target = landed[arg % len(landed)]
                    if target in touched or store.get(target).status == "purged":
                        continue
                    touched.add(target)
                    if op == "update":
                        tx.update(target, content="changed")
                    elif op == "invalidate":
                        tx.invalidate(target)
                    elif op == "archive":
                        tx.archive(target)
                    else:
                        tx.purge(target)
    return made, traces


def dump(store) -> dict:
    """Everything the public API can read, to compare before and after a failed call."""
    memories = {}
    for commit in reversed(store.log()):
        for change in commit.changes:
            if change.memory_id is not None and change.memory_id not in memories:
                try:
                    memories[change.memory_id] = [
                        asdict(m) for m in store.history(change.memory_id)
                    ]
                except NotFound:
                    memories[change.memory_id] = None
    return {
        "log": [asdict(c) for c in store.log()],
        "memories": memories,
        "traces": [asdict(t) for t in store.traces()],
        "usage": {k: asdict(u) for k, u in store.usage().items()},
        "tenants": store.tenants(),
    }
