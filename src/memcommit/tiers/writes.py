"""How TieredMemory writes: tier moves as commits by "tiers", one tenant each, dated safely.

A tiers commit makes room, it never calls for it: while one TieredMemory is at
work (touching or maintaining, in this thread or task), the commits it and its
compactor land do not start another maintenance. That is a context variable,
not an attribute, so two threads sharing one TieredMemory never see each
other's call. Commits are dated by ``commit_at_or_after``: the call's time, or
the newest commit's time when a later commit has landed already.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import TypeVar

from memcommit.commit_time import commit_at_or_after
from memcommit.model import Commit, Memory
from memcommit.store import Transaction, ViewLike
from memcommit.tiers.stats import TierStats, add_stored

AUTHOR = "tiers"
T = TypeVar("T")

#: ids of the TieredMemory objects at work in the current context.
_AT_WORK: ContextVar[frozenset[int]] = ContextVar("tiers_at_work", default=frozenset())


@contextmanager
def at_work(owner: object) -> Iterator[None]:
    """Mark ``owner`` as at work for the duration of the block (nested blocks are fine)."""
    token = _AT_WORK.set(_AT_WORK.get() | {id(owner)})
    try:
        yield
    finally:
        _AT_WORK.reset(token)


def is_at_work(owner: object) -> bool:
    """Whether ``owner`` is touching or maintaining in the current context."""
    return id(owner) in _AT_WORK.get()


def named(ids: Sequence[str], limit: int = 8) -> str:
    """Ids for a commit message: the first ``limit``, then how many more."""
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def policy_name(policy: object) -> str:
    return type(policy).__name__


def by_tenant(items: Iterable[T], tenant: Callable[[T], str]) -> dict[str, list[T]]:
    """Items grouped by tenant: tenants in order of first appearance, items in order."""
    out: dict[str, list[T]] = {}
    for item in items:
        out.setdefault(tenant(item), []).append(item)
    return out


def apply(tx: Transaction, moves: Iterable[tuple[str, str]]) -> list[Memory]:
    """Make each move (id, tier) in ``tx``; the new versions, in order."""
    out = []
    for i, tier in moves:
        if tier == "short":
            out.append(tx.page_in(i))
        elif tier == "archive":
            out.append(tx.archive(i))
        else:
            out.append(tx.move(i, tier))
    return out


def tiers_commit(
    io: ViewLike, message: str, now: datetime | None
) -> AbstractContextManager[Transaction]:
    """Open a commit by "tiers" on a tenant's ``io``, dated ``now`` or safely after it."""
    return commit_at_or_after(io, message=message, author=AUTHOR, now=now)


def land(
    io: ViewLike,
    tenant: str,
    moves: list[tuple[str, str]],
    message: str,
    now: datetime | None,
    delta: TierStats | None = None,
) -> Commit | None:
    """Land ``tenant``'s ``moves`` in one commit, adding ``delta`` to its stats; None if no move.

    Moves to the tier a memory is already in change nothing: if all are, no commit lands.
    """
    if not moves:
        return None
    with tiers_commit(io, message, now) as tx:
        apply(tx, moves)
        if delta is not None:
            add_stored(io, delta, tenant)
    return tx.result
