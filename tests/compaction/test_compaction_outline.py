"""outline: the model-free summarizer is complete, deduplicated and deterministic."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
from compaction_traces import T0, make_trace
from hypothesis import given
from hypothesis import strategies as st

from memcommit.compaction import outline
from memcommit.compaction.outline import LINE_CHARS, key_line
from memcommit.errors import InvalidInput


def test_outline_has_every_field() -> None:
    trace = make_trace("t1", lines=["Open the file\nwith details", "Run tests", "run   TESTS"])
    data = outline(trace)
    assert data["task"] == "task t1"
    assert data["status"] == "finished"
    assert data["steps"] == 3
    assert data["started"] == T0.isoformat()
    assert data["ended"] == (T0 + timedelta(minutes=4)).isoformat()
    assert data["seconds"] == 240.0
    assert data["kinds"] == {"event": 3}
    assert data["lines"] == ["Open the file", "Run tests"]  # key lines, repeats folded
    assert data["errors"] == []
    assert data["ids"] == {"trace": "t1", "root": "t1-root", "steps": ["t1-s1", "t1-s2", "t1-s3"]}
    json.dumps(data, allow_nan=False)


def test_errors_of_failed_steps() -> None:
    trace = make_trace("t2", status="failed", steps=3)
    bad = replace(trace.steps[1], metadata={"error": "Timeout talking to db\ntraceback..."})
    flagged = replace(trace.steps[2], content="exit 3", metadata={"status": "failed"})
    data = outline(replace(trace, steps=(trace.steps[0], bad, flagged)))
    assert data["errors"] == [
        {"step": 2, "error": "Timeout talking to db"},
        {"step": 3, "error": "exit 3"},
    ]


def test_failed_trace_without_marked_step_blames_its_last_step() -> None:
    data = outline(make_trace("t3", status="failed", lines=["fetch", "parse: KeyError 'x'"]))
    assert data["errors"] == [{"step": 2, "error": "parse: KeyError 'x'"}]


def test_purged_content_never_reaches_the_outline() -> None:
    trace = make_trace("t4", lines=["public", "secret token abc"])
    purged = replace(trace.steps[1], content="", status="purged")
    data = outline(replace(trace, steps=(trace.steps[0], purged)))
    assert data["lines"] == ["public"]
    assert data["ids"]["steps"] == ["t4-s1", "t4-s2"]


def test_long_traces_keep_bounded_lines() -> None:
    data = outline(make_trace("t5", steps=50), max_lines=10)
    assert len(data["lines"]) == 10
    assert data["omitted"] == 40
    assert data["lines"][0] == "step 1 of t5"
    assert data["lines"][-1] == "step 50 of t5"


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_max_lines_must_be_positive(bad) -> None:
    with pytest.raises(InvalidInput) as info:
        outline(make_trace("t"), max_lines=bad)
    assert info.value.field == "max_lines"


def test_key_line_is_cut_at_the_limit() -> None:
    assert len(key_line("x" * 1000)) == LINE_CHARS
    assert key_line("\n\n  a   b \nc") == "a b"
    assert key_line("   \n") == ""


@given(st.lists(st.text(max_size=30), min_size=0, max_size=15), st.booleans())
def test_outline_is_deterministic_json_without_repeats(lines: list[str], shuffle: bool) -> None:
    trace = make_trace("tp", lines=lines or None, steps=0 if not lines else len(lines))
    if shuffle:  # steps given out of order give the same outline
        trace = replace(trace, steps=tuple(reversed(trace.steps)))
    data = outline(trace)
    assert data == outline(trace)
    assert json.loads(json.dumps(data)) == data
    folded = [line.casefold() for line in data["lines"]]
    assert len(folded) == len(set(folded))
    assert data["steps"] == len(trace.steps)
    assert all(line for line in data["lines"])
