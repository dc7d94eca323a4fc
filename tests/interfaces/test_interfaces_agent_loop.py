"""examples/agent_loop.py runs as shipped, and leaves the store the story says it does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import memcommit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


def test_agent_loop_runs_and_learns(tmp_path):
    path = tmp_path / "loop.db"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--store", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "user corrected: Never force-push" in out
    # the last deploy was told of the correction by recall, and obeyed it
    last_turn = out.split("## Deploy the billing service again", 1)[1]
    assert "Never force-push" in last_turn
    assert "opened a pull request" in last_turn
    assert "step: git push --force" not in last_turn

    store = memcommit.open(str(path))
    try:
        assert store.tenants() == ["acme-devops"]
        rules = store.find(kinds=["correction"])
        assert [r.always for r in rules] == [True]
        assert store.find(kinds=["summary"]), "finished tasks were not compacted"
        assert store.usage([rules[0].id])[rules[0].id].count >= 1
        ports = [m.content for m in store.find(key="billing.port")]
        assert "Billing listens on port 9090." in ports
        assert store.check().ok
    finally:
        store.close()


def test_agent_loop_is_deterministic(tmp_path):
    outputs = [
        subprocess.run(
            [sys.executable, str(EXAMPLE), "--store", str(tmp_path / f"run{i}.db")],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        for i in range(2)
    ]
    assert outputs[0] == outputs[1]
