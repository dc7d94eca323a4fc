"""`StoreLike`, `ViewLike`, `TenantViewLike`: the shapes a store and its views satisfy."""

from __future__ import annotations

import pytest

from memcommit import StoreLike, ViewLike
from memcommit.errors import InvalidInput
from memcommit.store import TenantViewLike
from memcommit.store.store import backing_store


def test_a_store_is_store_like_and_a_view_is_view_like_only(make_store) -> None:
    store = make_store()
    view = store.tenant("acme")
    assert isinstance(store, StoreLike) and isinstance(store, ViewLike)
    assert isinstance(view, ViewLike) and isinstance(view, TenantViewLike)
    assert view.name == "acme"
    assert not isinstance(view, StoreLike)  # a view leads nowhere outside its tenant
    assert not isinstance(store, TenantViewLike)  # the whole store names no tenant


def test_only_a_store_or_its_view_has_a_backing_store(make_store) -> None:
    store = make_store()
    assert backing_store(store.tenant("acme")) is store
    with pytest.raises(InvalidInput) as caught:
        backing_store([])
    assert caught.value.field == "store"
