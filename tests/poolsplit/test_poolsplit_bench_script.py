"""The benchmark script runs and agrees with its reference (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "poolsplit_bench.py"


def test_benchmark_runs_on_a_small_store_with_identical_selections():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--entries", "3000", "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "identical selections: yes" in done.stdout
