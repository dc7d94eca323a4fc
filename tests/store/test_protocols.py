"""`StoreLike` and `ViewLike`: the published shapes a store and its tenant views satisfy."""

from __future__ import annotations

from memcommit import StoreLike, ViewLike


def test_a_store_is_store_like_and_a_view_is_view_like_only(make_store) -> None:
    store = make_store()
    view = store.tenant("acme")
    assert isinstance(store, StoreLike) and isinstance(store, ViewLike)
    assert isinstance(view, ViewLike)
    assert not isinstance(view, StoreLike)  # a view leads nowhere outside its tenant
