"""The result of `Store.check`: which stored invariants are broken, if any."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CheckReport:
    """``ok`` when ``problems`` is empty; each problem is one readable line."""

    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every invariant holds."""
        return not self.problems
