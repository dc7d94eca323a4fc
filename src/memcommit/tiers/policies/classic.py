"""The classic cache policies, as stateful classes that TieredMemory can drive.

FIFO, LRU, LFU, TwoQueue and ARC keep their own queues, told of every use and
page-in, and make exactly the choices libCacheSim makes for a cache of the same
size (object size 1, capacity counted in objects); the simulator's fast paths
are checked against both.

A miss is announced with ``on_page_in`` before ``victims`` is asked to make room,
because 2Q and ARC decide what to evict from where the incoming memory was
(a ghost list or nowhere). ``victims`` commits its choice; ``on_evict`` for a
memory chosen that way is a no-op, and for any other resident (say one that no
longer holds) it forgets the memory without leaving a ghost.

One instance serves every partition of a TieredMemory: it keeps one set of
queues per ``candidate.partition`` (its own for candidates that name none, as in
the simulator), so the caller's object hears every event and partitions never
evict for each other.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from datetime import datetime

from memcommit.tiers import inputs
from memcommit.tiers.candidate import Candidate


class _Queued:
    """Bookkeeping shared by the classics: admissions in order, and catching up.

    Memories the policy has never been told about (a restarted process, memories
    added by a commit) are adopted in order of last use when ``victims`` is called;
    residents missing from the candidates left by other means and are forgotten.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        """Start empty: no queues, no other partition's queues either (each classic extends)."""
        self._pending: list[str] = []
        self._partitions: dict[Hashable, _Queued] = {}

    def _queues(self, partition: Hashable) -> _Queued:
        """The cache of one partition: this object itself when none is named.

        Another partition's is a shallow copy of this object started empty, so it
        runs with the same settings; nothing is deep-copied (a policy may hold a lock).
        """
        if partition is None:
            return self
        queues = self._partitions.get(partition)
        if queues is None:
            queues = self._partitions[partition] = copy.copy(self)
            queues._reset()
        return queues

    # -- what each classic defines ------------------------------------------------
    def _size(self) -> int:
        raise NotImplementedError

    def _holds(self, key: str) -> bool:
        raise NotImplementedError

    def _hit(self, key: str) -> None:
        raise NotImplementedError

    def _admit(self, key: str) -> None:
        """Insert ``key``; the caller has made room."""
        raise NotImplementedError

    def _evict_one(self, capacity: int) -> str:
        raise NotImplementedError

    def _drop(self, key: str) -> None:
        """Forget a resident without remembering it as a ghost."""
        raise NotImplementedError

    def _residents(self) -> list[str]:
        raise NotImplementedError

    def _admit_making_room(self, key: str, capacity: int) -> list[str]:
        evicted = []
        while self._size() >= capacity:
            evicted.append(self._evict_one(capacity))
        self._admit(key)
        return evicted

    # -- notifications ------------------------------------------------------------
    def _settle(self) -> None:
        """Admit pending memories that needed no room (victims was not asked)."""
        for key in self._pending:
            if not self._holds(key):
                self._admit(key)
        self._pending.clear()

    def on_page_in(self, candidate: Candidate, now: datetime | None = None) -> None:
        """A missed memory is coming in; room is made by the next ``victims`` call."""
        queues = self._queues(candidate.partition)
        queues._settle()
        queues._pending.append(candidate.id)

    def on_use(self, candidate: Candidate, now: datetime | None = None) -> None:
        """A hit on a resident."""
        queues = self._queues(candidate.partition)
        queues._settle()
        if queues._holds(candidate.id):
            queues._hit(candidate.id)

    def on_evict(self, candidate: Candidate, now: datetime | None = None) -> None:
        """A resident left; forget it unless ``victims`` already chose it."""
        queues = self._queues(candidate.partition)
        queues._settle()
        if queues._holds(candidate.id):
            queues._drop(candidate.id)

    def victims(
        self, candidates: Sequence[Candidate], n: int, now: datetime | None = None
    ) -> list[Candidate]:
        """Make room for pending admissions and evict down to ``len + pending - n``."""
        partition = candidates[0].partition if candidates else None
        return self._queues(partition)._choose(candidates, n)

    def _choose(self, candidates: Sequence[Candidate], n: int) -> list[Candidate]:
        by_id = {c.id: c for c in candidates}
        incoming = [k for k in self._pending if k not in by_id]
        arrived = [k for k in self._pending if k in by_id]
        self._pending.clear()
        for key in self._residents():
            if key not in by_id:
                self._drop(key)
        for key in arrived:
            if not self._holds(key):
                self._admit(key)
        strangers = [c for c in candidates if not self._holds(c.id)]
        for c in sorted(strangers, key=lambda c: (c.recent, c.id)):
            self._admit(c.id)
        capacity = len(candidates) + len(incoming) - n
        chosen: list[str] = []
        for key in incoming:
            chosen.extend(self._admit_making_room(key, max(capacity, 1)))
        while self._size() > capacity and self._size() > 0:
            chosen.append(self._evict_one(max(capacity, 1)))
        return [by_id[k] for k in chosen if k in by_id]


class FIFO(_Queued):
    """First in, first out: a hit changes nothing."""

    def _reset(self) -> None:
        super()._reset()
        self._queue: OrderedDict[str, None] = OrderedDict()

    def _size(self) -> int:
        return len(self._queue)

    def _holds(self, key: str) -> bool:
        return key in self._queue

    def _hit(self, key: str) -> None:
        pass

    def _admit(self, key: str) -> None:
        self._queue[key] = None

    def _evict_one(self, capacity: int) -> str:
        return self._queue.popitem(last=False)[0]

    def _drop(self, key: str) -> None:
        del self._queue[key]

    def _residents(self) -> list[str]:
        return list(self._queue)


class LRU(FIFO):
    """Least recently used: a hit moves the memory to the back of the queue."""

    def _hit(self, key: str) -> None:
        self._queue.move_to_end(key)


class LFU(_Queued):
    """Least frequently used, counted while cached; new entries start at 1.

    Ties go to the least recently used: each frequency keeps its memories in the
    order they reached it, as libCacheSim's LFU does.
    """

    def _reset(self) -> None:
        super()._reset()
        self._freq: dict[str, int] = {}
        self._buckets: dict[int, OrderedDict[str, None]] = {}

    def _size(self) -> int:
        return len(self._freq)

    def _holds(self, key: str) -> bool:
        return key in self._freq

    def _put(self, key: str, freq: int) -> None:
        self._freq[key] = freq
        self._buckets.setdefault(freq, OrderedDict())[key] = None

    def _take(self, key: str) -> int:
        freq = self._freq.pop(key)
        bucket = self._buckets[freq]
        del bucket[key]
        if not bucket:
            del self._buckets[freq]
        return freq

    def _hit(self, key: str) -> None:
        self._put(key, self._take(key) + 1)

    def _admit(self, key: str) -> None:
        self._put(key, 1)

    def _evict_one(self, capacity: int) -> str:
        key = next(iter(self._buckets[min(self._buckets)]))
        self._take(key)
        return key

    def _drop(self, key: str) -> None:
        self._take(key)

    def _residents(self) -> list[str]:
        return list(self._freq)


class TwoQueue(_Queued):
    """Full 2Q (Johnson & Shasha): A1in FIFO, A1out ghost FIFO, Am LRU.

    A1in holds max(1, ⌊0.25·c⌋) before it gives up its oldest to A1out (a ghost
    list of ⌊0.5·c⌋ ids); a hit in A1in does not promote; a miss found in A1out
    goes to Am. (libCacheSim sizes A1in ⌊0.25·c⌋, which caches nothing below c=4.)
    ``in_ratio`` (a share of the cache, 0 to 1) and ``out_ratio`` (a finite
    multiple of it, at least 0) set those two sizes.
    """

    def __init__(self, in_ratio: float = 0.25, out_ratio: float = 0.5) -> None:
        self.in_ratio = inputs.number("in_ratio", in_ratio, most=1.0)
        self.out_ratio = inputs.number("out_ratio", out_ratio)
        super().__init__()

    def _reset(self) -> None:
        super()._reset()
        self._in: OrderedDict[str, None] = OrderedDict()
        self._out: OrderedDict[str, None] = OrderedDict()
        self._main: OrderedDict[str, None] = OrderedDict()

    def _size(self) -> int:
        return len(self._in) + len(self._main)

    def _holds(self, key: str) -> bool:
        return key in self._in or key in self._main

    def _hit(self, key: str) -> None:
        if key in self._main:
            self._main.move_to_end(key)

    def _admit(self, key: str) -> None:
        if key in self._out:
            del self._out[key]
            self._main[key] = None
        else:
            self._in[key] = None

    def _admit_making_room(self, key: str, capacity: int) -> list[str]:
        # Leave A1out before making room, or making room could push the ghost out.
        ghost = key in self._out
        if ghost:
            del self._out[key]
        evicted = []
        while self._size() >= capacity:
            evicted.append(self._evict_one(capacity))
        if ghost:
            self._main[key] = None
        else:
            self._in[key] = None
        return evicted

    def _evict_one(self, capacity: int) -> str:
        if len(self._in) > max(1, int(capacity * self.in_ratio)) or not self._main:
            key = self._in.popitem(last=False)[0]
            ghosts = int(capacity * self.out_ratio)
            if ghosts > 0:
                if len(self._out) >= ghosts:
                    self._out.popitem(last=False)
                self._out[key] = None
            return key
        return self._main.popitem(last=False)[0]

    def _drop(self, key: str) -> None:
        if key in self._in:
            del self._in[key]
        else:
            del self._main[key]

    def _residents(self) -> list[str]:
        return [*self._in, *self._main]


class ARC(_Queued):
    """Adaptive Replacement Cache (Megiddo & Modha, FAST '03).

    T1 holds memories seen once recently, T2 those seen at least twice; B1 and B2
    remember what each evicted. A ghost hit in B1 raises the target size p of T1,
    one in B2 lowers it; p is kept as a float, as libCacheSim does.
    """

    def _reset(self) -> None:
        super()._reset()
        self.p = 0.0
        self._t1: OrderedDict[str, None] = OrderedDict()
        self._t2: OrderedDict[str, None] = OrderedDict()
        self._b1: OrderedDict[str, None] = OrderedDict()
        self._b2: OrderedDict[str, None] = OrderedDict()

    def _size(self) -> int:
        return len(self._t1) + len(self._t2)

    def _holds(self, key: str) -> bool:
        return key in self._t1 or key in self._t2

    def _hit(self, key: str) -> None:
        if key in self._t1:
            del self._t1[key]
            self._t2[key] = None
        else:
            self._t2.move_to_end(key)

    def _admit(self, key: str) -> None:
        if key in self._b1:
            del self._b1[key]
            self._t2[key] = None
        elif key in self._b2:
            del self._b2[key]
            self._t2[key] = None
        else:
            self._t1[key] = None

    def _replace(self, from_b2: bool) -> str:
        """The paper's REPLACE: demote the LRU of T1 or T2 to its ghost list."""
        t1 = len(self._t1)
        if t1 and (t1 > self.p or (from_b2 and t1 == self.p) or not self._t2):
            key = self._t1.popitem(last=False)[0]
            self._b1[key] = None
        else:
            key = self._t2.popitem(last=False)[0]
            self._b2[key] = None
        return key

    def _admit_making_room(self, key: str, capacity: int) -> list[str]:
        in_b1, in_b2 = key in self._b1, key in self._b2
        if not (in_b1 or in_b2):
            return super()._admit_making_room(key, capacity)
        b1, b2 = len(self._b1), len(self._b2)
        if in_b1:
            self.p = min(self.p + max(b2 / b1, 1.0), float(capacity))
        else:
            self.p = max(self.p - max(b1 / b2, 1.0), 0.0)
        evicted = [self._replace(in_b2)] if self._size() >= capacity else []
        self._admit(key)
        return evicted

    def _evict_one(self, capacity: int) -> str:
        t1, b1 = len(self._t1), len(self._b1)
        if t1 + b1 >= capacity:
            if t1 < capacity:
                self._b1.popitem(last=False)
                return self._replace(False)
            return self._t1.popitem(last=False)[0]
        if t1 + b1 + len(self._t2) + len(self._b2) >= 2 * capacity:
            self._b2.popitem(last=False)
        return self._replace(False)

    def _drop(self, key: str) -> None:
        if key in self._t1:
            del self._t1[key]
        else:
            del self._t2[key]

    def _residents(self) -> list[str]:
        return [*self._t1, *self._t2]
