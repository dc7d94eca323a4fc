"""The two small protocols every policy follows, and the checks TieredMemory runs on them.

An eviction policy picks ``n`` victims among the candidates of one partition; a
promotion policy picks the candidates to move to long-term memory. Stateful
policies may also define ``on_use``, ``on_evict`` and ``on_page_in``; they are
told of each event in order, before the policy is next asked to choose.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal, Protocol, overload, runtime_checkable

from memcommit.errors import InvalidInput
from memcommit.tiers.candidate import Candidate

#: Optional notifications a stateful policy may define.
EVENTS = ("on_use", "on_evict", "on_page_in")


@runtime_checkable
class EvictionPolicy(Protocol):
    """Chooses what leaves short-term memory."""

    def victims(
        self, candidates: Sequence[Candidate], n: int, now: datetime | None
    ) -> list[Candidate]:
        """The ``n`` candidates to evict, first to go first."""
        ...


@runtime_checkable
class PromotionPolicy(Protocol):
    """Chooses what moves to long-term memory."""

    def select(self, candidates: Sequence[Candidate], now: datetime | None) -> list[Candidate]:
        """The candidates to promote."""
        ...


def check_eviction(policy: object, field: str = "eviction") -> EvictionPolicy:
    """Return ``policy`` when it has a callable ``victims``, else raise InvalidInput."""
    if not isinstance(policy, EvictionPolicy) or not callable(policy.victims):
        raise InvalidInput(field, policy, "must be an object with victims(candidates, n, now)")
    return policy


def check_promotion(policy: object, field: str = "promotion") -> PromotionPolicy:
    """Return ``policy`` when it has a callable ``select``, else raise InvalidInput."""
    if not isinstance(policy, PromotionPolicy) or not callable(policy.select):
        raise InvalidInput(field, policy, "must be an object with select(candidates, now)")
    return policy


@overload
def check_capacity(value: object, field: str = ..., *, optional: Literal[False] = ...) -> int: ...


@overload
def check_capacity(value: object, field: str = ..., *, optional: bool) -> int | None: ...


def check_capacity(value: object, field: str = "capacity", *, optional: bool = False) -> int | None:
    """An int of at least 1 (or None when ``optional``), else InvalidInput naming ``field``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(field, value, "must be an integer of at least 1")
    return value


def notify(policy: object, event: str, candidate: Candidate, now: datetime | None) -> None:
    """Tell a stateful policy of one event; policies without the hook ignore it."""
    hook = getattr(policy, event, None)
    if hook is not None:
        hook(candidate, now)
