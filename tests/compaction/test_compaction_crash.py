"""SIGKILL during compaction: a trace is either as it was or fully compacted, never half.

A child process compacts a real SQLite file and kills itself (SIGKILL, no
cleanup) at a chosen point inside the commit; the parent reopens the file and
checks every trace.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest
from compaction_store import add_trace, later

import memcommit
from memcommit.compaction import COMPACTED_INTO

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import datetime
    import memcommit
    from memcommit.compaction import Compactor

    path, where, at, batch, now = sys.argv[1:]
    store = memcommit.open(path)
    at, batch, ticks = int(at), int(batch) or None, [0]

    def kill(*args):
        os.kill(os.getpid(), signal.SIGKILL)

    def tick():
        ticks[0] += 1
        if ticks[0] == at:
            kill()
        return 0

    def progress(done, total):
        if where == "tx" and done == at:
            kill()  # inside the commit block: some traces written to the transaction
        if where == "sql" and done == total:
            # Fault injection in the database itself: die after `at` ticks of SQLite's
            # VM while the store writes and commits the batch.
            store.backend._conn.set_progress_handler(tick, 50)

    if where == "landed":
        store.on_commit(kill)
    Compactor(store).compact(now=datetime.fromisoformat(now), batch=batch, progress=progress)
    sys.exit(3)  # not reached when the kill point is inside the run
    """
)

TRACES = 12


def state_of(store, trace_id: str) -> str:
    """ "raw" or "compacted", after checking the trace is wholly one or the other."""
    trace = store.trace(trace_id)
    summary_id = trace.root.metadata.get(COMPACTED_INTO)
    tiers = {s.tier for s in trace.steps}
    summaries = [
        s for s in store.find(kinds=["summary"]) if s.metadata["provenance"]["trace_id"] == trace_id
    ]
    if summary_id is None:
        assert tiers == {"short"} and summaries == []
        return "raw"
    assert tiers == {"archive"}
    assert [s.id for s in summaries] == [summary_id]
    return "compacted"


RAW = ["raw"] * TRACES


@pytest.mark.parametrize(
    ("where", "at", "batch", "expected"),
    [
        ("tx", 1, 0, RAW),  # after the first trace went into the commit
        ("tx", 12, 0, RAW),  # every trace in, the commit not yet written
        ("tx", 7, 4, ["compacted"] * 4 + ["raw"] * 8),  # first batch landed, second in flight
        *(("sql", ticks, 0, RAW) for ticks in (1, 40, 80, 120, 160, 200, 240)),
        ("landed", 0, 0, ["compacted"] * TRACES),  # right after the commit landed
    ],
)
def test_sigkill_leaves_whole_traces(tmp_path, where, at, batch, expected) -> None:
    path = str(tmp_path / "crash.db")
    store = memcommit.open(path)
    ids = [add_trace(store, f"task {i}", steps=4, at=later(i)) for i in range(TRACES)]
    head = store.head
    store.close()

    args = [path, where, str(at), str(batch), later(60).isoformat()]
    child = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, timeout=120
    )
    assert child.returncode == -signal.SIGKILL, child.stderr

    store = memcommit.open(path)
    try:
        assert [state_of(store, t) for t in ids] == expected
        report = store.check()
        assert report.ok, report.problems
        if expected == RAW:
            assert store.head == head
    finally:
        store.close()
