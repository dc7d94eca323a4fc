"""Pause Python's cyclic garbage collector while a compaction batch is built and written.

A batch reads and writes tens of thousands of small, acyclic objects (memories,
their new versions, changes) while the traces still to compact are held too.
Every collection the allocations trigger re-walks all of them and frees nothing;
on 10,000 traces that was about a third of the run. Reference counting still
frees everything as usual; only cycles wait, until the batch ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Hold off cyclic collections inside the block; re-enable them after if they were on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
