"""What every part of the store's API stands on: its core, its tenant, and reads under the lock.

`StoreApi` (`operations`) is made of parts, each a class over `ApiPart`: the
uses and small state (`state_api`), the trace reads (`trace_reads`), the vectors
(`vector_api`) and the
commits and memory reads of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from memcommit.store.core import Core

F = TypeVar("F", bound=Callable[..., Any])


def reading(fn: F) -> F:
    """Run a read in its turn (`Core.reading`: a commit in another thread is never half seen)."""

    @functools.wraps(fn)
    def wrapper(self: ApiPart, *args: Any, **kwargs: Any) -> Any:
        with self._core.reading():
            return fn(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class ApiPart:
    """The store or view a part of the API works on: ``_only`` set restricts it to one tenant."""

    _core: Core
    _only: str | None

    def _visible(self, tenant: str) -> bool:
        return self._only is None or tenant == self._only
