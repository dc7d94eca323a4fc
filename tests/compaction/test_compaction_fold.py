"""fold: summaries of one task become one evolving summary."""

from __future__ import annotations

from compaction_traces import make_trace

from memcommit.compaction import fold, outline


def test_fold_counts_runs_and_merges_lines() -> None:
    one = outline(make_trace("a", lines=["Pull", "Build", "Ship"]))
    two = outline(make_trace("b", status="failed", lines=["Pull", "Build failed: disk full"]))
    data = fold("release", [one, two])
    assert data["task"] == "release"
    assert data["runs"] == 2
    assert data["statuses"] == {"failed": 1, "finished": 1}
    assert data["steps"] == 5
    assert data["lines"] == ["Build", "Ship", "Pull", "Build failed: disk full"]
    assert data["errors"] == ["Build failed: disk full"]


def test_folding_a_folded_summary_keeps_evolving() -> None:
    runs = [outline(make_trace(f"t{i}", lines=["Pull", f"run {i}"])) for i in range(4)]
    step_by_step = fold("task", [fold("task", runs[:2]), *runs[2:]])
    assert step_by_step["runs"] == 4
    assert step_by_step["statuses"] == {"finished": 4}
    assert set(step_by_step["lines"]) == set(fold("task", runs)["lines"])


def test_fold_takes_text_summaries_too() -> None:
    data = fold("t", ["The deploy worked after a retry.", {"note": "cache cleared"}])
    assert data["runs"] == 2
    assert data["lines"] == ["The deploy worked after a retry.", "note: cache cleared"]


def test_fold_is_bounded() -> None:
    many = [{"lines": [f"line {i}-{j}" for j in range(50)], "errors": ["e"]} for i in range(10)]
    data = fold("t", many)
    assert len(data["lines"]) == 200
    assert data["lines"][-1] == "line 9-49"
    assert data["errors"] == ["e"]
