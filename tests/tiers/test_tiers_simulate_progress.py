"""A replay tells how far it got, a synthetic trace is as long as asked, 0/0 is no ratio."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memcommit.cli import main
from memcommit.tiers.simulate import PROGRESS_EVERY, simulate
from memcommit.tiers.traces import SYNTHETIC, synthetic


@pytest.mark.parametrize("kind", SYNTHETIC)
@pytest.mark.parametrize("n", [0, 1, 999, 3_001, 30_000])
def test_a_synthetic_trace_has_exactly_the_requests_asked_for(kind, n):
    trace = synthetic(kind, n, ids=500, seed=3)
    assert len(trace) == n
    assert trace == synthetic(kind, n, ids=500, seed=3)  # seeded: the same every time


@pytest.mark.parametrize("policy", ["scored", "lru"])
def test_a_replay_reports_its_progress_as_it_goes(policy):
    trace = synthetic("zipf", 3 * PROGRESS_EVERY + 7, ids=2_000)
    heard: list[int] = []
    result = simulate(trace, capacity=50, policy=policy, progress=heard.append)
    assert heard[-1] == len(trace) == result.requests
    if policy == "scored":  # the slow path: every PROGRESS_EVERY requests, then the end
        assert heard == [PROGRESS_EVERY, 2 * PROGRESS_EVERY, 3 * PROGRESS_EVERY, len(trace)]
    assert result == simulate(trace, capacity=50, policy=policy)  # progress changes nothing


def test_the_cli_replays_what_was_asked_and_shows_no_ratio_for_nothing(tmp_path):
    runner = CliRunner()
    args = ["--synthetic", "scans", "--requests", "3001", "--capacity", "10", "--policy", "lru"]
    asked = runner.invoke(main, ["tiers", "simulate", *args, "--json"])
    assert asked.exit_code == 0, asked.output
    assert [r["requests"] for r in json.loads(asked.stdout)] == [3001]
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    shown = runner.invoke(
        main, ["tiers", "simulate", str(empty), "--capacity", "4", "--policy", "lru"]
    )
    assert shown.exit_code == 0, shown.output
    row = next(line for line in shown.stdout.splitlines() if line.strip().startswith("LRU"))
    assert row.split()[-1] == "—" and "0.000" not in row
