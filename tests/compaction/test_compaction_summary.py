"""What a summarizer returns is checked as JSON, bounded, and rendered for recall."""

from __future__ import annotations

import json

import pytest
from compaction_traces import make_trace
from hypothesis import given
from hypothesis import strategies as st

from memcommit.compaction import outline, render
from memcommit.compaction.summary import check_json, to_json
from memcommit.errors import InvalidInput


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"a": {1, 2}}, "summary['a']"),
        ({1: "x"}, "summary"),
        ([1.0, float("nan")], "summary[1]"),
        (object(), "summary"),
    ],
)
def test_non_json_is_rejected_naming_the_path(value: object, field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        check_json(value)
    assert info.value.field == field


def test_cycles_are_rejected() -> None:
    loop: list = []
    loop.append(loop)
    with pytest.raises(InvalidInput, match="nested deeper"):
        check_json(loop)


@pytest.mark.parametrize("empty", [None, "", {}, []])
def test_empty_summaries_are_rejected(empty: object) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        to_json(empty)


def test_size_limit_is_inclusive() -> None:
    text = to_json("x" * 8)
    assert len(text) == 10
    assert to_json("x" * 8, max_bytes=10) == text
    with pytest.raises(InvalidInput, match="max_bytes=9"):
        to_json("x" * 8, max_bytes=9)


def test_render_puts_the_task_and_lines_in_words_without_ids() -> None:
    data = outline(make_trace("t1", task="Deploy the billing service", lines=["Built image"]))
    text = render(data)
    assert text.splitlines()[0] == "Deploy the billing service"
    assert "- Built image" in text
    assert "t1-root" not in text and "t1-s1" not in text


def test_render_of_text_and_other_shapes() -> None:
    assert render("  plain words ") == "plain words"
    assert render({"headline": "x", "facts": ["a", "b"], "trace_id": "zzz"}) == (
        "headline: x\nfacts:\n- a\n- b"
    )
    assert render([1, "two"]) == "1, two"
    assert render({"task": "t", "lines": ["a"], "errors": "oops", "note": "n"}) == "t\nn\n- a"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_plain_json_round_trips(value: object) -> None:
    check_json(value)
    if value not in (None, "", [], {}):
        assert json.loads(to_json(value, max_bytes=10**6)) == value
        assert isinstance(render(value), str)


outline_shaped = st.fixed_dictionaries(
    {"lines": st.lists(json_values, max_size=4)},
    optional={k: json_values for k in ("task", "status", "steps", "statuses", "errors", "note")},
)


@given(outline_shaped)
def test_any_outline_shaped_data_renders(data: dict) -> None:
    text = render(data)
    assert isinstance(text, str)
    assert text.count("\n") >= len(data["lines"]) - 1
