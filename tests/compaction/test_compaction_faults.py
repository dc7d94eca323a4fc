"""A summarizer that fails leaves its trace untouched; the others still compact."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from compaction_store import add_trace, dump, later

from memcommit.compaction import Compactor, outline


@pytest.fixture
def store(make_store):
    """A fresh store on each backend (SQLite file, PostgreSQL schema)."""
    return make_store("mem.db")


class Exploding(dict):
    """A mapping whose items cannot be read."""

    def items(self):
        raise RuntimeError("cannot read me")


def nested(levels: int) -> dict:
    """A summary of ``levels`` objects, each inside the one before."""
    value: dict = {"text": "the deepest words"}
    for _ in range(levels - 1):
        value = {"text": "deeper", "more": value}
    return value


def raising(trace):
    raise RuntimeError("model timed out")


BAD: dict[str, Callable[[Any], Any]] = {
    "raises": raising,
    "set": lambda t: {"lines": {"a", "b"}},
    "nan": lambda t: {"score": float("nan")},
    "int keys": lambda t: {1: "one"},
    "object": lambda t: object(),
    "none": lambda t: None,
    "empty": lambda t: {},
    "huge": lambda t: {"text": "x" * 70_000},
    "nul": lambda t: "bad\x00text",
    "surrogate": lambda t: {"text": "\ud800"},
    "ids only": lambda t: {"ids": ["x"]},
    "unreadable": lambda t: Exploding(a=1),
    # kept as metadata["summary"]: 32 levels inside the metadata object are 33, past the limit
    "nested 32 levels": lambda t: nested(32),
    "NUL in a field left out of the text": lambda t: {"text": "fine", "step_id": "a\x00"},
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_summary_leaves_its_trace_and_others_compact(store, name: str) -> None:
    good = add_trace(store, "good one", at=later(1))
    bad = add_trace(store, "bad one", at=later(2))
    bad_before = {m.id: store.history(m.id) for m in store.find(trace=bad, live=False)}
    bad_trace = store.trace(bad)

    def summarizer(trace):
        return BAD[name](trace) if trace.id == bad else outline(trace)

    result = Compactor(store, summarizer=summarizer).compact(now=later(3))
    assert result.traces == (good,)
    (error,) = result.errors
    assert (error.trace_id, error.tenant) == (bad, "default")
    assert error.error
    assert {m.id: store.history(m.id) for m in store.find(trace=bad, live=False)} == bad_before
    assert store.trace(bad) == bad_trace
    # The next run with a working summarizer picks it up.
    assert Compactor(store).compact(now=later(4)).traces == (bad,)


def test_the_deepest_summary_the_store_keeps_compacts(store) -> None:
    trace = add_trace(store, "deep one", at=later(1))
    result = Compactor(store, summarizer=lambda t: nested(31)).compact(now=later(2))
    assert result.traces == (trace,) and result.errors == ()
    assert result.summaries[0].metadata["summary"] == nested(31)


def test_nothing_changes_when_every_summary_fails(store) -> None:
    for i in range(3):
        add_trace(store, f"t{i}", at=later(i))
    before = dump(store)
    result = Compactor(store, summarizer=raising).compact(now=later(5))
    assert result.traces == () and len(result.errors) == 3 and result.commit is None
    assert "RuntimeError: model timed out" in result.errors[0].error
    assert dump(store) == before


def test_compaction_only_adds_history(store) -> None:
    for i in range(4):
        add_trace(store, f"t{i}", at=later(i), status="failed" if i % 2 else "finished")
    before = dump(store)
    Compactor(store).compact(now=later(9))
    after = dump(store)
    assert after["log"][1:] == before["log"]
    for memory_id, versions in before["versions"].items():
        assert after["versions"][memory_id][: len(versions)] == versions


def test_the_size_limit_is_configurable(store) -> None:
    add_trace(store, "long task", steps=30)
    small = Compactor(store, max_bytes=500).compact(now=later(1))
    assert small.traces == () and "max_bytes=500" in small.errors[0].error
    assert len(Compactor(store, max_bytes=100_000).compact(now=later(2)).traces) == 1


@pytest.mark.parametrize("key", [lambda t: 1 / 0, lambda t: 7, lambda t: " "])
def test_a_bad_key_function_leaves_its_trace(store, key) -> None:
    add_trace(store, "t")
    before = dump(store)
    result = Compactor(store, key=key).compact(now=later(1))
    assert result.traces == () and "key" in result.errors[0].error
    assert dump(store) == before
