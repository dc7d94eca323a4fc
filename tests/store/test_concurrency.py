"""Concurrent writers: 4 processes x 250 commits on one file, nothing lost or duplicated."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

import memcommit

WRITER = r"""
import sys
import memcommit
store = memcommit.open(sys.argv[1], synchronous="NORMAL")
name, count = sys.argv[2], int(sys.argv[3])
for i in range(count):
    with store.commit(message=f"{name} {i}", author=name) as tx:
        tx.add(f"{name}-{i}", scope=name)
store.close()
"""

PROCESSES = 4
COMMITS = 250


@pytest.mark.slow
def test_four_writers_land_every_commit_once(tmp_path):
    path = str(tmp_path / "shared.db")
    memcommit.open(path).close()  # create the schema once, as a deployment would
    children = [
        subprocess.Popen([sys.executable, "-c", WRITER, path, f"w{n}", str(COMMITS)])
        for n in range(PROCESSES)
    ]
    for child in children:
        assert child.wait(timeout=300) == 0
    with memcommit.open(path) as store:
        log = store.log()
        assert len(log) == PROCESSES * COMMITS
        assert [c.seq for c in reversed(log)] == list(range(1, PROCESSES * COMMITS + 1))
        contents = Counter(m.content for m in store.find())
        expected = {f"w{n}-{i}" for n in range(PROCESSES) for i in range(COMMITS)}
        assert set(contents) == expected and set(contents.values()) == {1}
        per_writer = Counter(c.author for c in log)
        assert per_writer == {f"w{n}": COMMITS for n in range(PROCESSES)}
        assert store.check().ok


def test_threads_share_one_store(store):
    import threading

    def work(name):
        for i in range(50):
            with store.commit(author=name) as tx:
                tx.add(f"{name}-{i}")
            assert store.get(tx.result.changes[0].memory_id).content == f"{name}-{i}"

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.head.seq == 200 and len(store.find()) == 200
    assert store.check().ok
