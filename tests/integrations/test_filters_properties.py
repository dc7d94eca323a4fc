"""The framework-free rules the integrations share: namespaces as scopes, exact filters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcommit.errors import InvalidInput
from memcommit.integrations import filters, namespaces

labels = st.text(min_size=1, max_size=8).filter(lambda s: "." not in s)
names = st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True)
scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner), max_leaves=6
)


@given(st.lists(labels, min_size=1, max_size=5))
def test_a_scope_gives_its_namespace_back(namespace):
    assert namespaces.namespace_of(namespaces.scope_of(namespace)) == tuple(namespace)


@given(st.lists(labels, min_size=1, max_size=5), st.lists(labels, min_size=1, max_size=5))
def test_distinct_namespaces_never_share_a_scope(a, b):
    assert (namespaces.scope_of(a) == namespaces.scope_of(b)) == (a == b)


@given(st.lists(labels, min_size=1, max_size=5), st.integers(0, 5))
def test_every_prefix_and_suffix_matches_and_stars_match_any_label(namespace, n):
    ns = tuple(namespace)
    prefix, suffix = ns[:n], ns[len(ns) - min(n, len(ns)) :]
    assert namespaces.has_prefix(ns, prefix)
    assert namespaces.matches(ns, prefix, at_end=False)
    assert namespaces.matches(ns, suffix, at_end=True)
    assert namespaces.matches(ns, ("*",) * len(ns), at_end=False)
    assert not namespaces.matches(ns, ("*",) * (len(ns) + 1), at_end=True)


@given(st.dictionaries(names, values, min_size=1))
def test_a_value_matches_a_filter_made_of_its_own_fields(value):
    for key, field in value.items():
        assert filters.matches(value, filters.check({key: field}))
        assert filters.matches(value, filters.check({key: {"$eq": field}}))
        assert not filters.matches(value, filters.check({key: {"$ne": field}}))


@given(st.dictionaries(names, values), st.text(max_size=12))
def test_keys_outside_the_rule_are_refused_with_the_key_named(value, key):
    if all(part and all(c.isalnum() or c in "_-" for c in part) for part in key.split(".")):
        filters.check({key: 1})
        return
    with pytest.raises(InvalidInput) as err:
        filters.check({key: 1})
    assert (err.value.field, err.value.value) == ("filter", key)
