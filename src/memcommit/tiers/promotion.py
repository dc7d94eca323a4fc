"""Promotion policies: which memories move up to long-term memory.

Each has ``select(candidates, now)`` and returns the chosen candidates in the
order given. They combine with AnyOf and AllOf.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.tiers import inputs
from memcommit.tiers.candidate import Candidate
from memcommit.tiers.policies.base import check_promotion


class AccessCount:
    """Promote memories used at least ``n`` times."""

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidInput("n", n, "must be an integer of at least 1")
        self.n = n

    def select(
        self, candidates: Sequence[Candidate], now: datetime | None = None
    ) -> list[Candidate]:
        return [c for c in candidates if c.uses >= self.n]


class ImportanceAtLeast:
    """Promote memories whose importance is at least ``x``."""

    def __init__(self, x: float) -> None:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x <= 1:
            raise InvalidInput("x", x, "must be a number from 0 to 1")
        self.x = float(x)

    def select(
        self, candidates: Sequence[Candidate], now: datetime | None = None
    ) -> list[Candidate]:
        return [c for c in candidates if c.memory.importance >= self.x]


class KindIn:
    """Promote memories of the given kinds (at least one, each a kind the store knows)."""

    def __init__(self, kinds: Iterable[str]) -> None:
        if isinstance(kinds, str):
            raise InvalidInput("kinds", kinds, "must be a list of kinds, not one string")
        self.kinds = inputs.kinds("kinds", kinds)

    def select(
        self, candidates: Sequence[Candidate], now: datetime | None = None
    ) -> list[Candidate]:
        return [c for c in candidates if c.memory.kind in self.kinds]


class _Combined:
    def __init__(self, *policies: Any) -> None:
        if not policies:
            raise InvalidInput("policies", policies, "give at least one promotion policy")
        self.policies = tuple(check_promotion(p, "policies") for p in policies)


class AnyOf(_Combined):
    """Promote what any of the policies selects."""

    def select(
        self, candidates: Sequence[Candidate], now: datetime | None = None
    ) -> list[Candidate]:
        chosen: set[str] = set()
        for policy in self.policies:
            chosen.update(c.id for c in policy.select(candidates, now))
        return [c for c in candidates if c.id in chosen]


class AllOf(_Combined):
    """Promote what every one of the policies selects."""

    def select(
        self, candidates: Sequence[Candidate], now: datetime | None = None
    ) -> list[Candidate]:
        chosen: set[str] | None = None
        for policy in self.policies:
            ids = {c.id for c in policy.select(candidates, now)}
            chosen = ids if chosen is None else chosen & ids
        return [c for c in candidates if c.id in (chosen or set())]


class Never:
    """Promote nothing."""

    def select(
        self, candidates: Sequence[Candidate], now: datetime | None = None
    ) -> list[Candidate]:
        return []
