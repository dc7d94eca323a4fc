"""Bad input: Pool rejects it naming the field; retrieve tolerates odd entry fields."""

from __future__ import annotations

import copy
from datetime import datetime, timezone

import pytest

from poolsplit import Pool, PoolError, retrieve, retrieve_pools

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("cap", [0, 7, 2.5, float("inf")])
def test_pool_accepts_float_caps_as_0_1_0_did(cap):
    entries = [{"id": str(i), "content": "word " * 8} for i in range(3)]
    pool = Pool("p", max_tokens=cap, max_entries=cap)
    chosen = retrieve(entries, pool, now=NOW)
    assert len(chosen) <= cap
    if cap == float("inf"):
        assert len(chosen) == 3


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_tokens": -1}, "max_tokens"),
        ({"max_entries": -3}, "max_entries"),
        ({"max_tokens": float("nan")}, "max_tokens"),
        ({"max_entries": float("nan")}, "max_entries"),
        ({"max_tokens": "100"}, "max_tokens"),
        ({"max_entries": None}, "max_entries"),
        ({"max_entries": True}, "max_entries"),
        ({"name": 7}, "name"),
        ({"name": None}, "name"),
        ({"name": ""}, "name"),
        ({"types": "skill"}, "types"),
        ({"types": ["skill"]}, "types"),
        ({"types": {"skill"}}, "types"),
        ({"types": ("skill", 3)}, r"types\[1\]"),
    ],
)
def test_pool_rejects_bad_fields_naming_them_as_value_and_type_errors(kwargs, field):
    fields = {"name": "p", "max_tokens": 10, "max_entries": 2, **kwargs}
    for caught in (ValueError, TypeError, PoolError):
        with pytest.raises(caught, match=field):
            Pool(**fields)


def test_pool_accepts_zero_caps_and_an_empty_type_tuple():
    assert Pool("p", 0, 0).max_tokens == 0
    assert Pool("p", 10**30, 2).max_tokens == 10**30
    assert retrieve([{"type": "fact"}], Pool("p", 10, 10, ())) == []


def test_duplicate_pool_names_raise_before_anything_is_filled():
    with pytest.raises(ValueError, match="'a'"):
        retrieve_pools([{"content": "x"}], [Pool("a", 1, 1), Pool("b", 1, 1), Pool("a", 1, 1)])


ODD_ENTRIES = [
    {},
    {"content": None},
    {"content": 42, "id": None},
    {"content": ["a", "list"], "tags": "abc"},
    {"created": "not a date", "tags": None},
    {"created": 20260101, "id": 5},
    {"created": "", "project": ""},
    {"created": "2026-05-01T00:00:00+99:00"},
    {"created": "Z", "token_count": "12"},
    {"created": "2026-05-01ZZZ", "token_count": 0},
    {"token_count": -4, "tags": 7},
    {"token_count": 2.5, "tags": [["unhashable"]]},
    {"token_count": True, "type": ["unhashable"]},
    {"type": None, "scope": None},
    {"scope": "always", "content": None},
    {"status": None},
    {"superseded_by": 0, "id": ("a", "tuple")},
    {"created": datetime(2026, 1, 1), "id": "x"},
]


@pytest.mark.parametrize("pools", [[Pool("all", 100, 100)], [Pool("t", 100, 100, ("note",))]])
def test_retrieve_never_raises_on_odd_entry_fields_and_never_mutates(pools):
    entries = [dict(e) for e in ODD_ENTRIES] * 2
    before = copy.deepcopy(entries)
    context = {"message": "a list of things", "tags": ["a"], "project": "p"}
    result = retrieve_pools(entries, pools, context, now=NOW)
    assert entries == before
    selected = [e for chosen in result.values() for e in chosen]
    assert all(any(e is x for x in entries) for e in selected)


def test_odd_ids_and_created_values_of_one_kind_still_sort_natively():
    entries = [{"id": n, "content": "x"} for n in (3, 1, 2)]
    assert [e["id"] for e in retrieve(entries, Pool("p", 10, 10), now=NOW)] == [1, 2, 3]


@pytest.mark.parametrize(
    ("value", "error"), [("high", ValueError), (None, TypeError), ([5], TypeError)]
)
def test_a_base_priority_that_is_not_a_number_names_the_field(value, error):
    with pytest.raises(error, match="base_priority"):
        retrieve([{"id": "m1", "base_priority": value}], Pool("p", 10, 10), now=NOW)


def test_numeric_strings_are_read_as_numbers_like_float_does():
    entries = [{"id": "a", "base_priority": "2"}, {"id": "b", "base_priority": "9.5"}]
    assert retrieve(entries, Pool("p", 10, 1), now=NOW)[0]["id"] == "b"


def test_a_nan_score_does_not_break_packing():
    entries = [{"id": str(n), "content": "x"} for n in range(5)]
    result = retrieve(
        entries,
        Pool("p", 10, 3),
        scorer=lambda e, c, *, now: float("nan") if e["id"] == "2" else float(e["id"]),
    )
    assert len(result) == 3
