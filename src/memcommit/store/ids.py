"""Sortable ids: 48 bits of milliseconds then 80 counter bits, as 32 lowercase hex digits.

Ids made later sort later (also within one millisecond, within one process), so
a listing ordered by id is ordered by creation. Fixed-width hex keeps numeric order.
"""

from __future__ import annotations

import os
import threading
import time

_lock = threading.Lock()
_last_ms = 0
_last_rand = 0
_RAND_MAX = (1 << 80) - 1


def new_id() -> str:
    """A fresh id, greater than every id this process made before."""
    global _last_ms, _last_rand
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms > _last_ms:
            _last_ms = ms
            _last_rand = int.from_bytes(os.urandom(10), "big") >> 1
        else:
            _last_rand += 1
            if _last_rand > _RAND_MAX:
                _last_ms += 1
                _last_rand = 0
        value = (_last_ms << 80) | _last_rand
    return f"{value:032x}"


def commit_id(seq: int) -> str:
    """The id of commit ``seq``: the seq in 12 hex digits, then 20 random ones.

    Ids sort like seqs, and `seq_of` reads the seq back, so finding a commit by
    id needs no index of its own (one b-tree less to write per commit). The seq
    alone makes the id unique within a store; the random part, from the
    operating system (never the ``random`` module, which a program or a test
    framework may seed), makes commit 1's id the store's identity: no other
    store has it, so recall's snapshot folder and stamps tell stores apart.
    """
    return f"{seq:012x}{int.from_bytes(os.urandom(10), 'big'):020x}"


def seq_of(commit_id: str) -> int | None:
    """The seq a commit id names, or None if it is not shaped like one."""
    if len(commit_id) != 32:
        return None
    try:
        return int(commit_id[:12], 16)
    except ValueError:
        return None
