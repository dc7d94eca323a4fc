"""What TieredMemory keeps of the store between calls, kept in step with every commit.

It holds the number of evictable memories per (tier, tenant, scope), the
memories it has read, and the short-term residents of the partitions it worked
on. A landed commit is applied as a delta: the memories it changed are read as
of the seq before it and as of its own seq (two reads by id), so no commit costs
a scan of the store. Commits of this Store object arrive through ``observe``;
those of any other writer (another process, another Store object) are found by
``sync``, which compares the store's ``head_seq`` with the last seq seen and
replays ``diff``. A gap too large to replay drops everything, read again when
next needed (the counts with one GROUP BY).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from memcommit.model import LIVE_TIERS, Change, Commit, Memory
from memcommit.store import ViewLike

Partition = tuple[str, str]
_REPLAY_COMMITS = 256  # a longer gap is cheaper to recount than to replay
_REPLAY_IDS = 2_000
_RECOUNT_TRIES = 3
_MAX_MEMORIES = 65_536  # memories kept read; past this the cache starts over


def evictable(m: Memory) -> bool:
    """Whether ``m`` counts against capacity and may be evicted or trimmed.

    Behavioural corrections (``always``) are pinned: a burst of new memories must
    never push one out of working memory, so they neither count nor leave. A
    purged memory is a tombstone: it holds nothing, takes no room and cannot be
    moved (moving it raised `Purged` in every maintenance after the purge).
    """
    return not m.always and m.status != "purged"


class TierCache:
    """Counts, memories and short-term residents as of commit ``seen``."""

    def __init__(self, store: ViewLike) -> None:
        self.store = store
        self.seen: int = store.head_seq
        self._counts: Counter[tuple[str, str, str]] | None = None
        self.memories: dict[str, Memory] = {}
        self.short: dict[Partition, dict[str, Memory]] = {}
        self.expected: tuple[int, dict[str, tuple[Memory, Memory]]] | None = None

    def forget(self) -> None:
        """Drop the memories and residents read (an operation that failed changed them)."""
        self.memories.clear()
        self.short.clear()

    def _reset(self, seq: int) -> None:
        self.forget()
        self._counts = None
        self.seen = seq

    # -- keeping in step ------------------------------------------------------------

    def sync(self) -> None:
        """Catch up with every commit landed since ``seen``, by any writer."""
        head = self.store.head_seq
        if head != self.seen:
            self._advance(head, None)

    def expect(self, seq: int, changed: dict[str, tuple[Memory, Memory]]) -> None:
        """What the commit about to land as ``seq`` changes: {id: (before, after)}.

        Its writer knows it, so observing that commit reads nothing. The writer
        sets ``expected`` back to None once the commit landed or failed.
        """
        self.expected = (seq, changed)

    def observe(self, commit: Commit) -> None:
        """Apply a commit this store announced (its changes are at hand when it is the next)."""
        if commit.seq <= self.seen:
            return
        expected, self.expected = self.expected, None
        if expected is not None and expected[0] == commit.seq == self.seen + 1:
            for i, (old, new) in expected[1].items():
                self._replace(i, old, new)
            self.seen = commit.seq
            return
        self._advance(commit.seq, commit.changes if commit.seq == self.seen + 1 else None)

    def _advance(self, upto: int, changes: Iterable[Change] | None) -> None:
        seen = self.seen
        if upto < seen or (changes is None and upto - seen > _REPLAY_COMMITS):
            self._reset(upto)
            return
        if changes is None:
            changes = self.store.diff(seen, upto)
        ids = list(dict.fromkeys(c.memory_id for c in changes if c.memory_id is not None))
        if len(ids) > _REPLAY_IDS:
            self._reset(upto)
            return
        if ids:
            find = self.store.find
            before = {m.id: m for m in find(ids=ids, as_of=seen, live=False)} if seen else {}
            after = {m.id: m for m in find(ids=ids, as_of=upto, live=False)}
            for i in ids:
                self._replace(i, before.get(i), after.get(i))
        self.seen = upto

    def _replace(self, id: str, old: Memory | None, new: Memory | None) -> None:
        counts = self._counts
        if counts is not None:
            for m, step in ((old, -1), (new, 1)):
                if m is not None and m.tier in LIVE_TIERS and evictable(m):
                    counts[(m.tier, m.tenant, m.scope)] += step
        if id in self.memories:
            if new is None:
                del self.memories[id]
            else:
                self.memories[id] = new
        if old is not None and (short := self.short.get((old.tenant, old.scope))) is not None:
            short.pop(id, None)
        if new is not None and new.tier == "short" and evictable(new):
            short = self.short.get((new.tenant, new.scope))
            if short is not None:
                short[id] = new

    # -- reading --------------------------------------------------------------------

    def counts(self) -> Counter[tuple[str, str, str]]:
        """Evictable memories per (tier, tenant, scope) of the counted tiers, as of ``seen``.

        Counted once with one GROUP BY, then kept by the deltas; the count is
        taken again if another writer committed while it ran.
        """
        tries = 0
        while self._counts is None:
            self.sync()
            counted = Counter(self.store.tier_counts(tiers=LIVE_TIERS, always=False))
            tries += 1
            if self.store.head_seq == self.seen or tries == _RECOUNT_TRIES:
                self._counts = counted
        return self._counts

    def load(self, ids: Iterable[str]) -> dict[str, Memory]:
        """The memories of ``ids`` that exist (for this store or view), read in one query."""
        ids = list(ids)
        missing = [i for i in ids if i not in self.memories]
        if missing:
            if len(self.memories) + len(missing) > _MAX_MEMORIES:
                self.memories.clear()
            for m in self.store.find(ids=missing, live=False):
                self.memories[m.id] = m
        return {i: self.memories[i] for i in ids if i in self.memories}

    def residents(self, partition: Partition) -> dict[str, Memory]:
        """The evictable short-term memories of one partition, by id (read once, then kept)."""
        short = self.short.get(partition)
        if short is None:
            tenant, scope = partition
            found = self.store.find(tenant=tenant, scopes=[scope], tiers=["short"], live=False)
            short = self.short[partition] = {m.id: m for m in found if evictable(m)}
        return short
