"""Commits dated by work that another writer may already have passed.

A store refuses an explicit commit time earlier than its newest commit's, so
that times follow commit order. Work that follows a commit (tier maintenance,
compaction) is dated by the commit that called for it, and with several writers
on one store another one may land a later commit first: refusing then would
report a commit that landed as failed, and lose the follow-up work. Such a
commit is dated by the store's own clock instead, which the store raises to the
newest commit's time inside the same transaction, so no other writer can slip in
between: times stay in commit order, and no commit claims a time before one it
came after.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime

from memcommit.errors import InvalidInput
from memcommit.model import Commit
from memcommit.store import Transaction, ViewLike


@contextmanager
def commit_at_or_after(
    store: ViewLike, *, message: str, author: str, now: datetime | None
) -> Iterator[Transaction]:
    """``store.commit(...)`` at ``now``, or at the store's clock if a later commit landed first.

    ``now`` must already be checked (a timezone-aware datetime, or None): the
    only refusal of it left is the one for being earlier than the newest commit.
    """
    with ExitStack() as stack:
        try:
            tx = stack.enter_context(store.commit(message=message, author=author, now=now))
        except InvalidInput as exc:
            if now is None or exc.field != "now":
                raise
            tx = stack.enter_context(store.commit(message=message, author=author, now=None))
        yield tx


def landed(tx: Transaction) -> Commit:
    """The commit ``tx`` landed, read once its block has ended without an error."""
    assert tx.result is not None, "the commit's block has not ended"
    return tx.result
