"""The default scorer's constants, which are poolsplit 0.1.0's (issue 2 lists them)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import poolsplit_reference as reference
import pytest

from poolsplit import default_scorer

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def score(entry, context=None, now=NOW):
    return default_scorer(entry, context, now=now)


def test_base_priority_defaults_to_5_and_scales_the_score():
    assert score({}) == 5.0
    assert score({"base_priority": 8}) == 8.0
    assert score({"base_priority": 2.5}) == 2.5


@pytest.mark.parametrize(
    ("days", "factor"), [(0, 1.0), (9, 0.93), (45, 0.65), (90, 0.3), (89, 1 - 89 / 90 * 0.7)]
)
def test_recency_is_linear_over_90_days(days, factor):
    created = (NOW - timedelta(days=days)).isoformat()
    assert score({"base_priority": 1, "created": created}) == pytest.approx(factor)


def test_recency_never_drops_below_0_3():
    assert score({"base_priority": 1, "created": "2020-01-01T00:00:00"}) == pytest.approx(0.3)


def test_fractional_days_count():
    created = (NOW - timedelta(hours=36)).isoformat()
    assert score({"base_priority": 1, "created": created}) == pytest.approx(1 - 1.5 / 90 * 0.7)


@pytest.mark.parametrize("created", [None, "", "yesterday", "2026-13-45", 20260101, ["2026"]])
def test_missing_empty_or_unparseable_created_counts_as_zero_days(created):
    assert score({"created": created}) == 5.0


def test_a_future_created_counts_as_zero_days():
    assert score({"created": (NOW + timedelta(days=3)).isoformat()}) == 5.0


def test_a_trailing_z_is_accepted():
    assert score({"base_priority": 1, "created": "2026-05-02T12:00:00Z"}) == pytest.approx(
        1 - 30 / 90 * 0.7
    )


def test_offsets_are_dropped_and_both_sides_compare_as_naive_utc():
    # 12:00+05:00 is read as 12:00 naive, not 07:00 UTC.
    shifted = score({"base_priority": 1, "created": "2026-05-02T12:00:00+05:00"})
    assert shifted == pytest.approx(1 - 30 / 90 * 0.7)
    east = NOW.replace(tzinfo=timezone(timedelta(hours=9)))
    assert score({"base_priority": 1, "created": "2026-05-02T12:00:00"}, now=east) == shifted
    naive = NOW.replace(tzinfo=None)
    assert score({"base_priority": 1, "created": "2026-05-02T12:00:00"}, now=naive) == shifted


def test_now_defaults_to_the_current_utc_time():
    created = datetime.now(timezone.utc) - timedelta(days=45)
    assert score({"base_priority": 1, "created": created.isoformat()}, now=None) == pytest.approx(
        0.65, abs=1e-4
    )


@pytest.mark.parametrize(
    ("tags", "context_tags", "factor"),
    [
        (["a", "b"], ["a"], 1.25),
        (["a", "b"], ["a", "b", "c"], 1.5),
        (["a", "b", "c", "d"], ["d"], 1.125),
        (["a"], ["z"], 1.0),
        ([], ["a"], 1.0),
        (None, ["a"], 1.0),
        (["a", "a", "b"], ["a"], 1.25),  # a set: duplicates count once
    ],
)
def test_tag_overlap_is_a_fraction_of_the_entry_tags(tags, context_tags, factor):
    assert score({"base_priority": 1, "tags": tags}, {"tags": context_tags}) == factor


@pytest.mark.parametrize(
    ("project", "context_project", "factor"),
    [
        (None, None, 1.0),
        (None, "api", 1.0),
        ("api", "api", 1.5),
        ("api", "web", 0.5),
        ("api", None, 0.5),
    ],
)
def test_project_match(project, context_project, factor):
    context = {"project": context_project}
    assert score({"base_priority": 1, "project": project}, context) == factor


def test_message_overlap_is_a_fraction_of_the_message_words():
    # message words: deploy, rollback, database, staging (4); the entry shares 2.
    context = {"message": "Deploy the ROLLBACK; database -> staging!"}
    entry = {"base_priority": 1, "content": "how to rollback a deploy"}
    assert score(entry, context) == 1 + 1.5 * 0.5


def test_message_overlap_must_exceed_0_15():
    seven = "alpha bravo charlie delta echo foxtrot golf"
    # 1/7 = 0.142 is not above 0.15; 2/7 is.
    assert score({"base_priority": 1, "content": "alpha"}, {"message": seven}) == 1.0
    both = score({"base_priority": 1, "content": "alpha bravo"}, {"message": seven})
    assert both == pytest.approx(1 + 1.5 * 2 / 7)


def test_message_words_are_lowercased_alphanumeric_longer_than_two_minus_stop_words():
    context = {"message": "the one API v2 is new"}  # only "api" is significant
    assert score({"base_priority": 1, "content": "api"}, context) == 2.5
    assert score({"base_priority": 1, "content": "the one v2 is new"}, context) == 1.0


def test_a_substring_is_not_a_shared_word():
    context = {"message": "log"}
    assert score({"base_priority": 1, "content": "blog catalog logs"}, context) == 1.0
    assert score({"base_priority": 1, "content": "blog, log!"}, context) == 2.5


@pytest.mark.parametrize("word", sorted(reference.STOP))
def test_every_stop_word_is_ignored(word):
    assert score({"base_priority": 1, "content": word}, {"message": word}) == 1.0


def test_a_message_of_only_stop_words_or_no_message_changes_nothing():
    entry = {"base_priority": 1, "content": "this and that"}
    assert score(entry, {"message": "this and that"}) == 1.0
    assert score(entry, {"message": ""}) == 1.0
    assert score(entry, {"message": None}) == 1.0
    assert score(entry, {}) == 1.0


def test_content_that_is_missing_or_not_a_string_is_read_as_text():
    assert score({"base_priority": 1}, {"message": "hello"}) == 1.0
    assert score({"base_priority": 1, "content": 12345}, {"message": "12345"}) == 2.5


def test_context_may_be_none():
    assert score({"tags": ["a"], "project": "api", "content": "x"}, None) == 2.5


def test_factors_multiply():
    entry = {
        "base_priority": 2,
        "created": (NOW - timedelta(days=90)).isoformat(),
        "tags": ["a", "b"],
        "project": "web",
        "content": "cache invalidation",
    }
    context = {"tags": ["a"], "project": "api", "message": "cache invalidation"}
    assert score(entry, context) == pytest.approx(2 * 0.3 * 1.25 * 0.5 * 2.5)
