"""One tenant's store calls, one at a time, in a worker thread off the event loop.

An MCP server answers every client on one event loop, and a store call blocks: a
commit waits for the writers' lock, a purge rewrites a partition, a first recall
builds an index. Run on the loop, one tenant's slow call would hold every request
of every other tenant the process serves (``--tokens``), pings included. Each
tenant's server runs its calls in a worker thread instead, in arrival order and
one at a time, as they ran on the loop: a tenant's own calls never overlap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")


class Turns:
    """Runs one tenant's store calls in turn, each in a worker thread."""

    def __init__(self) -> None:
        self._one_at_a_time = anyio.CapacityLimiter(1)

    async def run(self, call: Callable[[], T]) -> T:
        """``call()`` in a worker thread, after this tenant's calls before it."""
        return await anyio.to_thread.run_sync(call, limiter=self._one_at_a_time)
