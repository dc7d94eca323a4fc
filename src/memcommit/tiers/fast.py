"""Plain-function replays of the classic policies: hits on a trace, nothing else.

These are the simulator's fast paths. Each makes exactly the choices of the
policy class of the same name (tests check both, and both against libCacheSim),
but keeps only dicts and OrderedDicts of ids and allocates nothing per request.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable


def fifo_hits(trace: Iterable[Hashable], capacity: int) -> int:
    """Hits of a FIFO cache of ``capacity`` objects."""
    cached: set[Hashable] = set()
    order: deque[Hashable] = deque()
    add, discard, push, pop = cached.add, cached.discard, order.append, order.popleft
    hits = 0
    for x in trace:
        if x in cached:
            hits += 1
            continue
        if len(cached) >= capacity:
            discard(pop())
        add(x)
        push(x)
    return hits


def lru_hits(trace: Iterable[Hashable], capacity: int) -> int:
    """Hits of an LRU cache of ``capacity`` objects."""
    cached: OrderedDict[Hashable, None] = OrderedDict()
    touch, evict = cached.move_to_end, cached.popitem
    hits = 0
    for x in trace:
        if x in cached:
            touch(x)
            hits += 1
            continue
        if len(cached) >= capacity:
            evict(False)
        cached[x] = None
    return hits


def lfu_hits(trace: Iterable[Hashable], capacity: int) -> int:
    """Hits of an in-cache LFU, ties to the least recently used."""
    freq: dict[Hashable, int] = {}
    buckets: dict[int, OrderedDict[Hashable, None]] = {}
    lowest = 0
    hits = 0
    for x in trace:
        f = freq.get(x)
        if f is not None:
            hits += 1
            bucket = buckets[f]
            del bucket[x]
            if not bucket:
                del buckets[f]
                if lowest == f:
                    lowest = f + 1
            f += 1
            up = buckets.get(f)
            if up is None:
                up = buckets[f] = OrderedDict()
            up[x] = None
            freq[x] = f
            continue
        if len(freq) >= capacity:
            bucket = buckets[lowest]
            del freq[bucket.popitem(False)[0]]
            if not bucket:
                del buckets[lowest]
        one = buckets.get(1)
        if one is None:
            one = buckets[1] = OrderedDict()
        one[x] = None
        freq[x] = 1
        lowest = 1
    return hits


def two_queue_hits(
    trace: Iterable[Hashable], capacity: int, in_ratio: float = 0.25, out_ratio: float = 0.5
) -> int:
    """Hits of full 2Q: A1in FIFO, A1out ghost FIFO, Am LRU."""
    k_in = max(1, int(capacity * in_ratio))
    k_out = int(capacity * out_ratio)
    a_in: OrderedDict[Hashable, None] = OrderedDict()
    a_out: OrderedDict[Hashable, None] = OrderedDict()
    a_m: OrderedDict[Hashable, None] = OrderedDict()
    hits = 0
    for x in trace:
        if x in a_in:
            hits += 1
            continue
        if x in a_m:
            a_m.move_to_end(x)
            hits += 1
            continue
        ghost = x in a_out
        if ghost:
            del a_out[x]
        if len(a_in) + len(a_m) >= capacity:
            if len(a_in) > k_in or not a_m:
                y = a_in.popitem(False)[0]
                if k_out > 0:
                    if len(a_out) >= k_out:
                        a_out.popitem(False)
                    a_out[y] = None
            else:
                a_m.popitem(False)
        if ghost:
            a_m[x] = None
        else:
            a_in[x] = None
    return hits


def arc_hits(trace: Iterable[Hashable], capacity: int) -> int:
    """Hits of ARC with a float target p."""
    c = capacity
    t1: OrderedDict[Hashable, None] = OrderedDict()
    t2: OrderedDict[Hashable, None] = OrderedDict()
    b1: OrderedDict[Hashable, None] = OrderedDict()
    b2: OrderedDict[Hashable, None] = OrderedDict()
    p = 0.0
    hits = 0
    for x in trace:
        if x in t2:
            t2.move_to_end(x)
            hits += 1
            continue
        if x in t1:
            del t1[x]
            t2[x] = None
            hits += 1
            continue
        in_b1 = x in b1
        if in_b1 or x in b2:
            if in_b1:
                p = min(p + max(len(b2) / len(b1), 1.0), float(c))
                del b1[x]
            else:
                p = max(p - max(len(b1) / len(b2), 1.0), 0.0)
                del b2[x]
            if len(t1) + len(t2) >= c:
                n1 = len(t1)  # REPLACE, told whether the ghost came from B2
                if n1 and (n1 > p or (not in_b1 and n1 == p) or not t2):
                    b1[t1.popitem(False)[0]] = None
                else:
                    b2[t2.popitem(False)[0]] = None
            t2[x] = None
            continue
        if len(t1) + len(t2) >= c:
            n1 = len(t1)
            if n1 + len(b1) >= c:
                if n1 < c:
                    b1.popitem(False)
                    if n1 and (n1 > p or not t2):
                        b1[t1.popitem(False)[0]] = None
                    else:
                        b2[t2.popitem(False)[0]] = None
                else:
                    t1.popitem(False)
            else:
                if n1 + len(b1) + len(t2) + len(b2) >= 2 * c:
                    b2.popitem(False)
                if n1 and (n1 > p or not t2):
                    b1[t1.popitem(False)[0]] = None
                else:
                    b2[t2.popitem(False)[0]] = None
        t1[x] = None
    return hits
