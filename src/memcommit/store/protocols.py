"""The published shapes of a store and of a view, for code that takes either.

`ViewLike` is what every layer above the store reads and writes through: a
`Store` and a `TenantView` both satisfy it. `StoreLike` adds what only the
whole store has (its tenants' views, the integrity check, closing);
`TenantViewLike` adds the one tenant a view is restricted to. Derived data
kept beside a store (recall's index) reads it through `StoreLike` too: the
commit ids it is stamped with, the versions a commit wrote, and the folder the
backend chooses for it. Annotate a
parameter with these instead of the concrete classes, so a caller may pass a
store, a view, or a stand-in of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from memcommit.embedding import Embedder
from memcommit.model import Change, Commit, Memory, Trace, Usage
from memcommit.store.check import CheckReport
from memcommit.store.embeddings import StoredVectors
from memcommit.store.transaction import Transaction

#: A commit named by its seq, its id, the Commit itself, or a time (the commit current then).
CommitRef = int | str | Commit | datetime


@runtime_checkable
class ViewLike(Protocol):
    """Commits, reads, hooks, use counts and state over one tenant or all of them."""

    def commit(
        self, message: str = "", author: str = "agent", now: datetime | None = None
    ) -> AbstractContextManager[Transaction]: ...

    def defer(self, fn: Callable[[], Any]) -> None: ...

    def on_commit(self, fn: Callable[[Commit], Any]) -> Callable[[], None]: ...

    def record_uses(
        self, ids: Iterable[str], *, state: Mapping[tuple[str, str], Any] | None = None
    ) -> dict[str, Usage]: ...

    def usage(self, ids: Iterable[str] | None = None) -> dict[str, Usage]: ...

    def state_get(self, namespace: str, key: str, default: Any = None) -> Any: ...

    def state_items(self, namespace: str) -> dict[str, Any]: ...

    def state_set(self, namespace: str, key: str, value: Any) -> None: ...

    def state_delete(self, namespace: str, key: str) -> None: ...

    def get(self, id: str, *, as_of: CommitRef | None = None) -> Memory: ...

    def find(
        self,
        *,
        ids: Iterable[str] | None = None,
        tenant: str | None = None,
        kinds: Iterable[str] | None = None,
        scopes: Iterable[str] | None = None,
        sessions: Iterable[str] | None = None,
        key: str | None = None,
        tiers: Iterable[str] | None = None,
        live: bool = True,
        since: datetime | None = None,
        until: datetime | None = None,
        trace: str | None = None,
        as_of: CommitRef | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> list[Memory]: ...

    def history(self, memory_id: str, *, as_of: CommitRef | None = None) -> list[Memory]: ...

    def log(self, *, limit: int | None = None, as_of: CommitRef | None = None) -> list[Commit]: ...

    def show(self, commit: CommitRef) -> Commit: ...

    @property
    def head(self) -> Commit | None: ...

    @property
    def head_seq(self) -> int: ...

    @property
    def tip(self) -> tuple[int, str | None]: ...

    def tier_counts(
        self, *, tiers: Iterable[str] | None = None, always: bool | None = None
    ) -> dict[tuple[str, str, str], int]: ...

    def diff(self, a: CommitRef, b: CommitRef | None = None) -> list[Change]: ...

    def trace(self, trace_id: str, *, as_of: CommitRef | None = None) -> Trace: ...

    def traces(
        self,
        *,
        tenant: str | None = None,
        status: str | None = None,
        as_of: CommitRef | None = None,
        unmarked: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> list[Trace]: ...

    def tenants(self, *, as_of: CommitRef | None = None) -> list[str]: ...

    def recall(self, query: str, **kw: Any) -> Any: ...

    @property
    def embedder(self) -> Embedder | None: ...

    def vectors(
        self,
        embedder: str | Embedder | None = None,
        *,
        tenant: str | None = None,
        ids: Iterable[str] | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> StoredVectors: ...


@runtime_checkable
class TenantViewLike(ViewLike, Protocol):
    """A view restricted to one tenant, which it names."""

    @property
    def name(self) -> str: ...


@runtime_checkable
class StoreLike(ViewLike, Protocol):
    """A whole store: every tenant, with views restricted to one, a check and a close.

    ``written``, ``commit_id``, ``tenant_changes`` and ``cache_dir`` serve derived data kept
    outside the store (see `memcommit.store.Store`).
    """

    def tenant(self, name: str) -> TenantViewLike: ...

    def check(self) -> CheckReport: ...

    def written(self, commit: Commit) -> Sequence[Memory] | None: ...

    def commit_id(self, seq: int) -> str | None: ...

    def tenant_changes(self, after: int, upto: int) -> list[tuple[str | None, Change]]: ...

    def cache_dir(self, name: str, *, root: str | Path | None = None) -> Path | None: ...

    def close(self) -> None: ...

    @property
    def closed(self) -> bool: ...
