"""Crash safety: a writer killed with SIGKILL at random moments never leaves half a commit."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

import memcommit

WRITER = r"""
import random, sys, uuid
import memcommit
store = memcommit.open(sys.argv[1])
print("ready", flush=True)
rng = random.Random()
while True:
    k = rng.randint(1, 30)
    token = uuid.uuid4().hex
    with store.commit(message=f"k={k} token={token}") as tx:
        for j in range(k):
            tx.add(f"{token}-{j}", tags=[token])
        earlier = store.find(limit=1)
        if earlier:
            tx.update(earlier[0].id, importance=rng.random())
"""

KILLS = 50


def verify(path):
    """Every landed commit is whole; check() passes."""
    with memcommit.open(path) as store:
        report = store.check()
        assert report.ok, report.problems
        log = store.log()
        assert [c.seq for c in reversed(log)] == list(range(1, len(log) + 1))
        by_token = Counter()
        for m in store.find(live=False):
            by_token[m.tags[0]] += 1
        for commit in log:
            k = int(commit.message.split()[0][2:])
            token = commit.message.split()[1][6:]
            adds = [c for c in commit.changes if c.op == "add"]
            assert len(adds) == k and by_token[token] == k
        return len(log)


@pytest.mark.slow
def test_sigkill_at_random_moments_never_tears_a_commit(tmp_path):
    path = str(tmp_path / "crash.db")
    rng = random.Random(1234)
    landed = []
    for round_ in range(KILLS):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, path], stdout=subprocess.PIPE, text=True
        )
        if round_ % 10 != 0:  # most kills land mid-loop; some during open/migration
            assert child.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.0, 0.08))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        landed.append(verify(path))
    assert landed == sorted(landed)
    assert landed[-1] >= 10  # the writer got real work done between kills
