"""What a summarizer returns is checked as JSON, bounded, and rendered for recall."""

from __future__ import annotations

import json

import pytest
from compaction_traces import make_trace
from hypothesis import given
from hypothesis import strategies as st

from memcommit.compaction import outline, render
from memcommit.compaction.summary import to_json
from memcommit.errors import InvalidInput


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"a": {1, 2}}, "not set (at ['a'])"),
        ({1: "x"}, "string keys"),
        ([1.0, float("nan")], "(at [1])"),
        (object(), "not object"),
        ({"note_id": "a\x00b"}, "NUL characters (at ['note_id'])"),
    ],
)
def test_non_json_is_rejected_saying_where(value: object, where: str) -> None:
    with pytest.raises(InvalidInput) as info:
        to_json(value)
    assert info.value.field == "summary"
    assert where in info.value.reason


def test_cycles_are_rejected() -> None:
    loop: list = []
    loop.append(loop)
    with pytest.raises(InvalidInput, match="nested deeper"):
        to_json(loop)


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


#: What JSON strings the store keeps: no NUL, no lone surrogate.
clean_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | clean_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(clean_text, inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_plain_json_round_trips(value: object) -> None:
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
