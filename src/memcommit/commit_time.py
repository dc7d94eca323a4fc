"""Commits dated by work that another writer may already have passed.

A store refuses an explicit commit time earlier than its newest commit's, so
that times follow commit order. Work that follows a commit (tier maintenance,
compaction) is dated by the commit that called for it, or by the time its
caller injected, and a later commit may have landed first (another writer's, or
one the caller dated later): refusing then would report a commit that landed as
failed, and lose the follow-up work. Such a commit is dated by the newest
commit's time instead: ``max(now, newest)``, read from the store, so the same
calls give the same history. The store's clock is never read in its place: a
clock ahead of the injected times would date the commit after them and make the
caller's next injected time (still in order for it) be refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime

from memcommit.errors import InvalidInput
from memcommit.model import Commit
from memcommit.store import Transaction, ViewLike
from memcommit.store.store import backing_store


@contextmanager
def commit_at_or_after(
    store: ViewLike, *, message: str, author: str, now: datetime | None
) -> Iterator[Transaction]:
    """``store.commit(...)`` at ``now``, or at the newest commit's time if that is later.

    ``now`` must already be checked (a timezone-aware datetime, or None: the
    store's clock, which the store itself raises to the newest commit's time).
    The only refusal of it left is the one for being earlier than the newest
    commit; each such refusal is retried at the newest commit's time, read
    again, which another writer may have moved on meanwhile.
    """
    with ExitStack() as stack:
        while True:
            try:
                tx = stack.enter_context(store.commit(message=message, author=author, now=now))
                break
            except InvalidInput as exc:
                later = _newest_after(store, now) if exc.field == "now" else None
                if later is None:
                    raise
                now = later
        yield tx


def _newest_after(store: ViewLike, now: datetime | None) -> datetime | None:
    """The time of the whole store's newest commit when it is later than ``now``, else None.

    None tells the caller that the refusal was not for being earlier, so it is
    not retried. A tenant view's ``head`` is its tenant's newest commit, but a
    commit time is refused against every tenant's, so a view is read through its
    store; a stand-in that is neither answers with its own ``head``.
    """
    if now is None:
        return None
    try:
        whole: ViewLike = backing_store(store)
    except InvalidInput:
        whole = store
    head = whole.head
    return head.time if head is not None and head.time > now else None


def landed(tx: Transaction) -> Commit:
    """The commit ``tx`` landed, read once its block has ended without an error."""
    assert tx.result is not None, "the commit's block has not ended"
    return tx.result
